package benchdoc

import (
	"os/exec"
	"strings"
	"testing"
)

// Stale, in this repository: a recording of HEAD speaks for it; one of a
// commit HEAD's history lacks speaks for nothing.
func TestStale(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	head := strings.TrimSpace(string(out))
	for _, a := range Areas {
		changed, err := Stale("../..", a, &Record{Commit: head})
		if err != nil || len(changed) > 0 {
			t.Errorf("%s at HEAD: %q, %v: want nothing changed", a.Name, changed, err)
		}
	}
	if _, err := Stale("../..", Areas[0], &Record{Commit: strings.Repeat("0", 40)}); err == nil || !strings.Contains(err.Error(), "not in HEAD's history") {
		t.Errorf("a commit outside the history: %v", err)
	}
}

// The simulation's area measures the pace and its harness, and not the
// provider's other packages.
func TestMeasuredDirs(t *testing.T) {
	dirs, err := measuredDirs("../..", []string{"./internal/pace"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(dirs, " "); !strings.Contains(got, "internal/pace") || !strings.Contains(got, "internal/ratelimit") || strings.Contains(got, "internal/client") {
		t.Errorf("measuredDirs(internal/pace) = %q", got)
	}
}
