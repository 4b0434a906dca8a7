package listing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
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
	one, err := records.Decode([]byte(`{"data": ` + resource + `}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]records.Profile{"list": page.profiles[0], "single": one} {
		if p.Key != "k7" || string(p.Raw) != resource {
			t.Errorf("%s: key %q, record %s", name, p.Key, p.Raw)
		}
	}
}

// The seed corpora run in the normal test command; `go test -fuzz` explores.

func FuzzDecodeListPage(f *testing.F) {
	for _, seed := range []string{
		`[{"profile_key":"a"}]`, `{"data":[{"profile_key":"a","x":{"y":[1,"]"]}}]}`, `{"profiles":[],"totalCount":3}`,
		`{"data":{"items":[{"profile_key":"b\"c"}],"count":1}}`, `[{"profile_key":1e3}]`, `{"a":{"b":{"c":[]}}}`,
		`[`, `[{"profile_key":"a"},]`, `{"data":[{"profile_key":"a"}],"next":"/api/v1/browsers?page=2","has_more":true}`, "\ufeff[]", `"x"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		page, err := decodeListPage(body)
		if err != nil {
			return
		}
		for _, p := range page.profiles {
			if p.Key == "" || !json.Valid(p.Raw) {
				t.Fatalf("accepted a bad profile %q %q from %q", p.Key, p.Raw, body)
			}
			if key, ok, err := records.Key(p.Raw); err != nil || !ok || key != p.Key {
				t.Fatalf("key %q does not match its record %q", p.Key, p.Raw)
			}
		}
	})
}

// A regression guard for the decoding the scale target depends on; make
// bench runs it. ns/profile is the figure to compare across runs.
func BenchmarkDecodeListPage(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		body := append([]byte("["), bytes.Join(toBytes(standin.Generate(n)), []byte(","))...)
		body = append(body, ']')
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for range b.N {
				page, err := decodeListPage(body)
				if err != nil || len(page.profiles) != n {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/profile")
		})
	}
}

func toBytes[T ~[]byte](in []T) [][]byte {
	out := make([][]byte, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}
