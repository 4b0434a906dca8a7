package records

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestKey_keptExactlyAsSent(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`{"profile_key":"  Spaced Case "}`:     "  Spaced Case ",
		`{"profile_key":"caf\u00e9"}`:          "café",
		`{"profile_key":12345678901234567890}`: "12345678901234567890",
		`{"profile_key":"a\/b"}`:               "a/b",
	} {
		got, ok, err := Key([]byte(raw))
		if err != nil || !ok || got != want {
			t.Errorf("%s: %q %v %v, want %q", raw, got, ok, err, want)
		}
	}
}

func TestDecode_objectOrEnvelope(t *testing.T) {
	t.Parallel()
	rec := `{"profile_key": "k", "name": "N", "browser": {"engine": "x"}}`
	for _, body := range []string{rec, `{"data": ` + rec + `}`, `{"data": {"profile": ` + rec + `}}`, `{"meta": {"id": 1}, "result": ` + rec + `}`} {
		p, err := Decode([]byte(body))
		if err != nil || p.Key != "k" || string(p.Raw) != rec {
			t.Errorf("%s: %q %s %v", body, p.Key, p.Raw, err)
		}
	}
	for _, body := range []string{`[]`, `{"data": {}}`, `{"a": {"b": {"c": ` + rec + `}}}`} {
		if _, err := Decode([]byte(body)); err == nil {
			t.Errorf("%s: accepted", body)
		}
	}
}

// The seed corpus runs in the normal test command; `go test -fuzz` explores.

func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{"profile_key":"a"}`, `{"data":{"profile_key":"a"}}`, `{"data":{"p":{"profile_key":"a"}}}`, `{"profile_key":null}`, `{}`, `[]`, `{"a":"\u00e9"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := Decode(body)
		if err == nil && (p.Key == "" || !json.Valid(p.Raw) || !utf8.Valid([]byte(p.Key)) && utf8.Valid(body)) {
			t.Fatalf("accepted a bad profile %q %q from %q", p.Key, p.Raw, body)
		}
	})
}

// A member is found at the record's top, else in its JSON:API attributes,
// with the path it was found at.
func TestLocate_topThenAttributes(t *testing.T) {
	t.Parallel()
	rec := []byte(`{"name":"top","proxy":{"country":"DE"},"attributes":{"name":"inner","status":"active","proxy":{"port":3}}}`)
	for path, want := range map[string][2]string{
		"name":          {`"top"`, "name"},
		"status":        {`"active"`, "attributes.status"},
		"proxy.country": {`"DE"`, "proxy.country"},
		"proxy.port":    {"3", "attributes.proxy.port"},
	} {
		v, full, ok := Locate(rec, path)
		if !ok || string(v) != want[0] || full != want[1] {
			t.Errorf("%s: %s at %q (%v), want %s at %q", path, v, full, ok, want[0], want[1])
		}
	}
	if _, _, ok := Locate(rec, "missing"); ok {
		t.Error("found a member no one carries")
	}
}
