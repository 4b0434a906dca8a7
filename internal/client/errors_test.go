package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// The token is masked before a body is cut to its excerpt, so no part of it
// survives at the cut.
func TestExcerpt_masksBeforeCutting(t *testing.T) {
	t.Parallel()
	r := redact.New(testToken)
	for pad := excerptLimit - 20; pad <= excerptLimit+2; pad++ {
		body := strings.Repeat("x", pad) + testToken + strings.Repeat(" ", 50) + "tail"
		got := excerpt([]byte(body), r)
		for i := 0; i+6 <= len(testToken); i++ {
			if part := testToken[i : i+6]; strings.Contains(got, part) {
				t.Errorf("pad %d: %q of the token survived: %q", pad, part, got)
			}
		}
	}
}

func TestErrors_mapStatusesToKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   error
		header []string // name, value, ...
	}{
		{401, `{"error":"invalid token"}`, ErrUnauthorized, nil},
		{403, `{"error":"forbidden"}`, ErrUnauthorized, nil},
		{404, `{"error":"not found"}`, ErrNotFound, nil},
		{400, `{"error":"bad"}`, ErrUnexpectedStatus, nil},
		{500, `oops`, ErrUnexpectedStatus, nil},
		{503, `<html>proxy</html>`, ErrUnavailable, nil},
		{429, `<html>slow down</html>`, ErrUnavailable, nil},
		{200, `<!doctype html><html>app</html>`, ErrNotJSON, nil},
		{200, ``, ErrNotJSON, nil},
		{200, `{"unrelated":true}`, ErrUnexpectedShape, nil},
		// A 403 is a rate limit's when it says so, as GitHub's are, and the
		// token's otherwise; a 401 is always the token's.
		{403, `{"message":"API rate limit exceeded"}`, ErrUnavailable, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "0"}},
		{403, `{"message":"secondary rate limit"}`, ErrUnavailable, []string{"Retry-After", "0"}},
		{403, `{"error":{"errors":[{"reason":"rateLimitExceeded"}]}}`, ErrUnavailable, []string{"RateLimit", "limit=10, remaining=0, reset=0"}},
		{403, `{"message":"Resource not accessible by integration"}`, ErrUnauthorized, []string{"X-RateLimit-Remaining", "4999", "X-RateLimit-Reset", "1700000000"}},
		{401, `{"message":"Bad credentials"}`, ErrUnauthorized, []string{"Retry-After", "0"}},
	}
	for _, tc := range cases {
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(tc.header); i += 2 {
				w.Header().Set(tc.header[i], tc.header[i+1])
			}
			w.Header().Set("X-Request-Id", "rid-7")
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}, func(c *Config) { c.MaxRetries = 1 })
		_, err := c.ListProfiles(context.Background())
		var re *RequestError
		if !errors.Is(err, tc.want) || !errors.As(err, &re) {
			t.Errorf("HTTP %d %q %q: err = %v, want %v", tc.status, tc.body, tc.header, err, tc.want)
			continue
		}
		if re.StatusCode != tc.status || re.RequestID != "rid-7" || re.Method != "GET" || !strings.HasSuffix(re.URL, "/api/v1/browsers") {
			t.Errorf("HTTP %d: error fields %+v", tc.status, re)
		}
		if tc.body != "" && re.Excerpt == "" {
			t.Errorf("HTTP %d: no body excerpt", tc.status)
		}
	}
}

func TestErrors_neverCarryTheToken(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":"bad token","received":"`+r.Header.Get("Authorization")+`"}`)
	})
	_, err := c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), testToken) || strings.Contains(re.Excerpt, testToken) {
		t.Errorf("token leaked: %v / %s", err, re.Excerpt)
	}
	if !strings.Contains(re.Excerpt, "Bearer ***") {
		t.Errorf("excerpt = %s, want the masked echo", re.Excerpt)
	}
}
