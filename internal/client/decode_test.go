package client

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeListPage_acceptsEveryDocumentedShape(t *testing.T) {
	t.Parallel()
	a, b := `{"profile_key":"b","name":"B"}`, `{"profile_key": "a", "nested": {"x": [1, 2]}}`
	arr := "[" + a + ", " + b + "]"
	for name, body := range map[string]string{
		"bare array":       arr,
		"data":             `{"data": ` + arr + `}`,
		"profiles + total": `{"profiles": ` + arr + `, "totalCount": 2}`,
		"data.items":       `{"data": {"items": ` + arr + `, "count": 2}}`,
		"other name":       `{"meta": {"v": 1}, "whatever": ` + arr + `}`,
		"decoy array":      `{"errors": [], "tags": ["x"], "result": {"list": ` + arr + `}}`,
	} {
		page, err := decodeListPage([]byte(body))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(page.profiles) != 2 || page.profiles[0].Key != "b" || string(page.profiles[0].Raw) != a || string(page.profiles[1].Raw) != b {
			t.Errorf("%s: profiles %+v", name, page.profiles)
		}
	}
}

func TestDecodeListPage_emptyLists(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`[]`, `{"data": []}`, `{"data": {"items": [], "count": 0}}`} {
		page, err := decodeListPage([]byte(body))
		if err != nil || len(page.profiles) != 0 {
			t.Errorf("%s: %v %v", body, page.profiles, err)
		}
	}
}

func TestDecodeListPage_refusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"error": "nope"}`,
		`[{"id": 1}]`,
		`[{"profile_key": "a"}, {"id": 2}]`,
		`[{"profile_key": null}]`,
		`[{"profile_key": ""}]`,
		`[{"profile_key": "a"}`,
		`"text"`,
		`{"data": {"deeper": {"items": [{"profile_key": "a"}]}}}`,
	} {
		if _, err := decodeListPage([]byte(body)); err == nil {
			t.Errorf("%s: accepted", body)
		}
	}
}

func TestProfileKey_keptExactlyAsSent(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`{"profile_key":"  Spaced Case "}`:     "  Spaced Case ",
		`{"profile_key":"caf\u00e9"}`:          "café",
		`{"profile_key":12345678901234567890}`: "12345678901234567890",
		`{"profile_key":"a\/b"}`:               "a/b",
	} {
		got, ok, err := profileKey([]byte(raw))
		if err != nil || !ok || got != want {
			t.Errorf("%s: %q %v %v, want %q", raw, got, ok, err, want)
		}
	}
}

func TestDecodeProfile_objectOrEnvelope(t *testing.T) {
	t.Parallel()
	rec := `{"profile_key": "k", "name": "N", "browser": {"engine": "x"}}`
	for _, body := range []string{rec, `{"data": ` + rec + `}`, `{"data": {"profile": ` + rec + `}}`, `{"meta": {"id": 1}, "result": ` + rec + `}`} {
		p, err := decodeProfile([]byte(body))
		if err != nil || p.Key != "k" || string(p.Raw) != rec {
			t.Errorf("%s: %q %s %v", body, p.Key, p.Raw, err)
		}
	}
	for _, body := range []string{`[]`, `{"data": {}}`, `{"a": {"b": {"c": ` + rec + `}}}`} {
		if _, err := decodeProfile([]byte(body)); err == nil {
			t.Errorf("%s: accepted", body)
		}
	}
}

func TestCheckProfileKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]error{
		"": ErrKeyEmpty, ".": ErrKeyDotSegment, "..": ErrKeyDotSegment,
		"{profile_key}": ErrKeyPlaceholder, "pre-{id}-post": ErrKeyPlaceholder,
		"...": nil, "a.b": nil, " ": nil, "{": nil, "}{": nil, "team/alpha": nil,
	} {
		if err := CheckProfileKey(key); !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("%q: %v, want %v", key, err, want)
		}
	}
}

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

func TestFindByValue_suggestsTheKeyOfADisplayName(t *testing.T) {
	t.Parallel()
	ps := []Profile{
		{Key: "k1", Raw: []byte(`{"profile_key":"k1","name":"Marketing Team","labels":{"display":"Shared"}}`)},
		{Key: "K2", Raw: []byte(`{"profile_key":"K2","name":"Other"}`)},
	}
	cases := map[string]Match{
		"Marketing Team":  {Key: "k1", Field: "name", Exact: true},
		"Shared":          {Key: "k1", Field: "labels.display", Exact: true},
		"marketing team ": {Key: "k1", Field: "name"},
		"k2":              {Key: "K2", Field: "profile_key"},
	}
	for given, want := range cases {
		got := FindByValue(ps, given)
		if len(got) == 0 || got[0] != want {
			t.Errorf("%q: %+v, want %+v", given, got, want)
		}
	}
	if got := FindByValue(ps, "nothing"); len(got) != 0 {
		t.Errorf("nothing: %+v", got)
	}
}

// A JSON:API resource object is one record read one way: its profile_key
// in attributes, and the whole resource object as the record, in the list
// and the single read alike.
func TestDecode_jsonAPIResourceObjectsReadAlike(t *testing.T) {
	t.Parallel()
	resource := `{"type": "browsers", "id": "7", "attributes": {"profile_key": "k7", "name": "Seven"}, "links": {"self": "/browsers/k7"}}`
	page, err := decodeListPage([]byte(`{"data": [` + resource + `], "links": {"next": null}}`))
	if err != nil || len(page.profiles) != 1 {
		t.Fatalf("list: %v %v", page.profiles, err)
	}
	one, err := decodeProfile([]byte(`{"data": ` + resource + `}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]Profile{"list": page.profiles[0], "single": one} {
		if p.Key != "k7" || string(p.Raw) != resource {
			t.Errorf("%s: key %q, record %s", name, p.Key, p.Raw)
		}
	}
}
