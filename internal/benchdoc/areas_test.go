package benchdoc

import (
	"os"
	"os/exec"
	"path/filepath"
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

// A recording stays current through a change to comments alone, and not
// through a change to the code.
func TestStale_commentsAreNotCode(t *testing.T) {
	root := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
	}
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		run("git", "add", "-A")
		run("git", "commit", "-q", "-m", "change")
	}
	run("git", "init", "-q")
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/p\n\ngo 1.22\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write("package p\n\n// F is one.\nfunc F() int { return 1 }\n")
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	r, a := &Record{Commit: strings.TrimSpace(string(out))}, Area{Name: "p", Programs: []string{"."}}
	write("package p\n\n// F is the number one,\n// said again.\nfunc F() int { return 1 }\n")
	if changed, err := Stale(root, a, r); err != nil || len(changed) > 0 {
		t.Errorf("comments changed: %q, %v; want nothing changed", changed, err)
	}
	write("package p\n\n// F is the number one.\nfunc F() int { return 2 }\n")
	if changed, err := Stale(root, a, r); err != nil || strings.Join(changed, " ") != "p.go" {
		t.Errorf("the code changed: %q, %v; want p.go", changed, err)
	}
}
