package client

import (
	"strings"
	"testing"
)

func TestParseBaseURL(t *testing.T) {
	t.Parallel()
	ok := map[string]string{
		"https://api.example.com/api/v1":   "https://api.example.com/api/v1",
		"https://api.example.com/api/v1/":  "https://api.example.com/api/v1",
		"https://api.example.com/x/api/v1": "https://api.example.com/x/api/v1",
		"http://127.0.0.1:8080/api/v1":     "http://127.0.0.1:8080/api/v1",
		"http://127.8.9.1/api/v1":          "http://127.8.9.1/api/v1",
		"http://localhost:1/api/v1":        "http://localhost:1/api/v1",
		"http://[::1]:9/api/v1/":           "http://[::1]:9/api/v1",
	}
	for in, want := range ok {
		u, err := ParseBaseURL(in)
		if err != nil || u.String() != want {
			t.Errorf("%s: %v %v, want %s", in, u, err, want)
		}
	}
	bad := map[string]string{
		"{base_url}":                         "placeholder {base_url}",
		"https://{host}/api/v1":              "placeholder",
		"api.example.com/api/v1":             "absolute",
		"https://api.example.com":            "/api/v1",
		"https://api.example.com/api/v1//":   "/api/v1",
		"https://api.example.com/api/v2":     "/api/v1",
		"http://api.example.com/api/v1":      "loopback",
		"http://10.0.0.1/api/v1":             "loopback",
		"ftp://api.example.com/api/v1":       "scheme",
		"https://u:p@api.example.com/api/v1": "credentials",
		"https://api.example.com/api/v1?x=1": "query",
	}
	for in, want := range bad {
		if _, err := ParseBaseURL(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want it to mention %q", in, err, want)
		}
	}
}
