package listing

import (
	"slices"
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
)

// Keys outside Unicode NFC are named, and keys that collapse into one
// through NFC are called out; a single read by the NFC spelling finds the
// service's spelling.
func TestRead_namesKeysOutsideNFC(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": `[{"profile_key":"caf\u00e9"},{"profile_key":"cafe\u0301"},{"profile_key":"re\u0301sume\u0301"},{"profile_key":"plain"}]`}}
	list := read(t, s, Options{})
	if len(list.Warnings) != 1 {
		t.Fatalf("warnings %q", list.Warnings)
	}
	w := list.Warnings[0]
	if !strings.Contains(w, "2 profile_key value(s) from the service are not") || !strings.Contains(w, "Distinct keys become the same key") ||
		!strings.Contains(w, `"cafe\u0301", "caf\u00e9"`) {
		t.Errorf("warning %q", w)
	}
	if got := records.ServiceSpelling(list.Profiles, "résumé"); got != "re\u0301sume\u0301" {
		t.Errorf("ServiceSpelling = %q", got)
	}
	if got := records.ServiceSpelling(list.Profiles, "plain"); got != "" {
		t.Errorf("ServiceSpelling of a key spelled alike = %q", got)
	}
}

func TestRead_sortedByteOrderAndDeduplicated(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": `[{"profile_key":"b"},{"profile_key":"B"},{"profile_key":"a"},{"profile_key":"b","dup":true},{"profile_key":"é"},{"profile_key":"a"}]`}}
	list := read(t, s, Options{})
	var got []string
	for _, p := range list.Profiles {
		got = append(got, p.Key)
	}
	if !slices.Equal(got, []string{"B", "a", "b", "é"}) {
		t.Errorf("keys %q", got)
	}
	if string(list.Profiles[2].Raw) != `{"profile_key":"b"}` || len(list.Warnings) != 2 ||
		!strings.Contains(list.Warnings[0], "1 record(s) again") || !strings.Contains(list.Warnings[1], `twice with different records; the first record of each is kept: "b"`) {
		t.Errorf("kept %s, warnings %q", list.Profiles[2].Raw, list.Warnings)
	}
}
