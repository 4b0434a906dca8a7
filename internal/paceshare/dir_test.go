package paceshare

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFiles_userOnlyAndNoToken: every file is the user's alone, and none
// holds the token or the address in any form.
func TestFiles_userOnlyAndNoToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pace")
	s := open(t, dir, "https://api.example.test", token)
	_ = s.Update(bg, func([]byte) ([]byte, error) { return []byte(`{"version":1}`), nil })
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("directory %v (%v): want 0700", info.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, _ := e.Info()
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v: want 0600", e.Name(), info.Mode().Perm())
		}
		for _, secret := range []string{token, "Zx81secret", "api.example.test"} {
			if bytes.Contains(b, []byte(secret)) || bytes.Contains([]byte(e.Name()), []byte(secret)) {
				t.Errorf("%s holds %q", e.Name(), secret)
			}
		}
	}
}

// TestOpen_refusesWhatItCannotTrust: a directory it cannot make, a key
// others can read, or a key it did not make.
func TestOpen_refusesWhatItCannotTrust(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(file, nil, 0o600)
	if _, err := Open(filepath.Join(file, "pace"), format, "https://api.example.test", token); err == nil {
		t.Error("a directory under a file opened")
	}
	loose := t.TempDir()
	_ = os.WriteFile(filepath.Join(loose, "key"), bytes.Repeat([]byte{1}, 32), 0o644)
	if _, err := Open(loose, format, "https://api.example.test", token); err == nil {
		t.Error("a key readable by others was used")
	}
	short := t.TempDir()
	_ = os.WriteFile(filepath.Join(short, "key"), []byte("guess"), 0o600)
	if _, err := Open(short, format, "https://api.example.test", token); err == nil {
		t.Error("a key it did not make was used")
	}
}

// TestOpen_onlyTheUsersOwnDirectory: a directory others can write, one
// under a parent others can write without the sticky bit, a link, or
// (where the test can make one, as root) another user's, is refused, and
// nothing is written in it.
func TestOpen_onlyTheUsersOwnDirectory(t *testing.T) {
	open := func(dir string) error {
		s, err := Open(dir, format, "https://api.example.test", token)
		if err == nil {
			_ = s.Close()
		}
		return err
	}
	shared := filepath.Join(t.TempDir(), "shared")
	mkdir(t, shared, 0o777)
	underShared := filepath.Join(t.TempDir(), "open")
	mkdir(t, underShared, 0o777)
	mkdir(t, filepath.Join(underShared, "pace"), 0o700)
	sticky := filepath.Join(t.TempDir(), "sticky")
	mkdir(t, sticky, 0o777|os.ModeSticky)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		shared:                               "writable by others (mode 0777)",
		filepath.Join(underShared, "pace"):   "open is writable by others",
		filepath.Join(underShared, "pace2"):  "open is writable by others",
		link:                                 "not a directory but a link",
		filepath.Join(sticky, "pace"):        "",
		filepath.Join(t.TempDir(), "a", "b"): "",
	} {
		err := open(dir)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", dir, err, want)
		}
		if entries, _ := os.ReadDir(dir); want != "" && len(entries) > 0 {
			t.Errorf("%s: refused, but %d files were written in it", dir, len(entries))
		}
	}
	if os.Geteuid() != 0 {
		t.Log("not root: no directory of another user's to try")
		return
	}
	theirs := filepath.Join(t.TempDir(), "theirs")
	mkdir(t, theirs, 0o700)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := open(theirs); err == nil || !strings.Contains(err.Error(), "owned by another user (uid 65534)") {
		t.Errorf("another user's directory: %v", err)
	}
}

// TestOpen_followsNoLink: a link planted under every name the store uses
// (the key, its lock, the state, its lock, and names the sweep reads)
// leaves the file it points at untouched.
func TestOpen_followsNoLink(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("the victim's own"), 0o600); err != nil {
		t.Fatal(err)
	}
	plant := func(dir string, names ...string) {
		for _, name := range names {
			if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range []string{"key", "key.lock"} {
		dir := t.TempDir()
		plant(dir, name)
		if s, err := Open(dir, format, "https://api.example.test", token); err == nil {
			_ = s.Close()
			t.Errorf("%s planted: opened", name)
		}
	}
	// A real key, so that the state's names are the ones the store uses.
	dir := t.TempDir()
	s := open(t, dir, "https://api.example.test", token)
	base := s.path("")
	_ = s.Close()
	for _, suffix := range []string{".state", ".lock"} {
		_ = os.Remove(base + ".state")
		_ = os.Remove(base + ".lock")
		plant(dir, filepath.Base(base+suffix))
		s := open(t, dir, "https://api.example.test", token)
		if err := s.Update(bg, func([]byte) ([]byte, error) { return []byte("written"), nil }); err == nil {
			t.Errorf("%s planted: a step went through it", suffix)
		}
		_ = os.Remove(base + suffix)
	}
	// What the sweep reads: another's liveness file, a joining one, an old
	// state.
	plant(dir, "0123.abcd.live", "4567.abcd.join", "89ab.state")
	_ = open(t, dir, "https://api.example.test", token)
	if b, err := os.ReadFile(victim); err != nil || string(b) != "the victim's own" {
		t.Fatalf("the file the links point at is now %q (%v)", b, err)
	}
}
