package paceshare

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

// TestUpdate_healsADamagedState: a state cut short, changed, or not one
// is read as none, the step's state replaces it, and Update says so
// (pace.ErrHealed), once; what
// follows a whole state (a longer one's end, left by a process that died
// between its write and the truncation) is ignored.
func TestUpdate_healsADamagedState(t *testing.T) {
	s := open(t, t.TempDir(), "https://api.example.test", token)
	_ = s.Update(bg, func([]byte) ([]byte, error) { return []byte("a state of some length"), nil })
	whole, _ := os.ReadFile(s.path(".state"))
	for name, c := range map[string]struct {
		file []byte
		want string
	}{
		"cut short":     {whole[:len(whole)-3], "cut short or changed"},
		"changed":       {append(bytes.Clone(whole[:len(whole)-1]), 'X'), "cut short or changed"},
		"not one":       {[]byte(`{"version": 1}`), "not a state"},
		"with a tail":   {append(bytes.Clone(whole), "of an older, longer state"...), ""},
		"never written": {nil, ""},
	} {
		if err := os.WriteFile(s.path(".state"), c.file, 0o600); err != nil {
			t.Fatal(err)
		}
		var got []byte
		healed := s.Update(bg, func(b []byte) ([]byte, error) { got = b; return []byte("healed"), nil })
		switch {
		case healed != nil && !errors.Is(healed, pace.ErrHealed):
			t.Errorf("%s: %v", name, healed)
		case c.want != "" && (got != nil || healed == nil || !strings.Contains(healed.Error(), c.want)):
			t.Errorf("%s: read %q, healed %v: want none read, and it said %q", name, got, healed, c.want)
		case c.want == "" && (healed != nil || c.file != nil && string(got) != "a state of some length" || c.file == nil && got != nil):
			t.Errorf("%s: read %q, healed %v", name, got, healed)
		}
		err := s.Update(bg, func(b []byte) ([]byte, error) {
			if string(b) != "healed" {
				t.Errorf("%s: the state after a step is %q", name, b)
			}
			return []byte("a state of some length"), nil
		})
		if err != nil {
			t.Errorf("%s: healed told twice, or the next step failed: %v", name, err)
		}
	}
}
