package paceshare

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const token = "bp_live_Zx81secretTOKEN"

// TestOpen_sameCredentialsMeet: stores of one base address and token meet
// at one state; another token or address, at another.
func TestOpen_sameCredentialsMeet(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, dir, "https://api.example.test", token), open(t, dir, "https://api.example.test", token)
	other, elsewhere := open(t, dir, "https://api.example.test", token+"2"), open(t, dir, "https://eu.example.test", token)
	if a.name != b.name || a.member == b.member {
		t.Fatalf("one credential, names %s and %s, members %s and %s", a.name, b.name, a.member, b.member)
	}
	if other.name == a.name || elsewhere.name == a.name {
		t.Fatal("another token or address shares the state")
	}
	// A key of another directory names the same credentials otherwise.
	if c := open(t, t.TempDir(), "https://api.example.test", token); c.name == a.name {
		t.Fatal("the name does not depend on the directory's key")
	}
}

// TestUpdate_losesNoStep: steps of many stores at once, each reading and
// writing the state, lose none.
func TestUpdate_losesNoStep(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for range 8 {
		s := open(t, dir, "https://api.example.test", token)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				err := s.Update(func(b []byte) ([]byte, error) {
					n, _ := strconv.Atoi(string(b))
					return []byte(strconv.Itoa(n + 1)), nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	s := open(t, dir, "https://api.example.test", token)
	_ = s.Update(func(b []byte) ([]byte, error) {
		if string(b) != "400" {
			t.Errorf("state %q after 400 steps", b)
		}
		return b, nil
	})
}

// TestUpdate_failedStepSavesNothing: a step that fails leaves the state as
// it was.
func TestUpdate_failedStepSavesNothing(t *testing.T) {
	s := open(t, t.TempDir(), "https://api.example.test", token)
	_ = s.Update(func([]byte) ([]byte, error) { return []byte("kept"), nil })
	if err := s.Update(func([]byte) ([]byte, error) { return []byte("lost"), fmt.Errorf("no") }); err == nil {
		t.Fatal("the step's failure was not returned")
	}
	_ = s.Update(func(b []byte) ([]byte, error) {
		if string(b) != "kept" {
			t.Errorf("state %q", b)
		}
		return b, nil
	})
}

// TestUpdate_tellsADamagedState: a state cut short, changed, or not one
// is refused (its Pacer goes on alone); what follows a whole state (a
// longer one's end, left by a process that died between its write and the
// truncation) is ignored.
func TestUpdate_tellsADamagedState(t *testing.T) {
	s := open(t, t.TempDir(), "https://api.example.test", token)
	_ = s.Update(func([]byte) ([]byte, error) { return []byte("a state of some length"), nil })
	whole, _ := os.ReadFile(s.path(".json"))
	for name, c := range map[string]struct {
		file []byte
		want string
	}{
		"cut short":     {whole[:len(whole)-3], "damaged"},
		"changed":       {append(bytes.Clone(whole[:len(whole)-1]), 'X'), "damaged"},
		"not one":       {[]byte(`{"version": 1}`), "not a state"},
		"with a tail":   {append(bytes.Clone(whole), "of an older, longer state"...), ""},
		"never written": {nil, ""},
	} {
		if err := os.WriteFile(s.path(".json"), c.file, 0o600); err != nil {
			t.Fatal(err)
		}
		var got []byte
		err := s.Update(func(b []byte) ([]byte, error) { got = b; return nil, fmt.Errorf("read only") })
		switch {
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want it to say %q", name, err, c.want)
		case c.want == "" && c.file != nil && string(got) != "a state of some length":
			t.Errorf("%s: read %q", name, got)
		case c.want == "" && c.file == nil && got != nil:
			t.Errorf("%s: read %q, want none", name, got)
		}
	}
}

// TestFiles_userOnlyAndNoToken: every file is the user's alone, and none
// holds the token or the address in any form.
func TestFiles_userOnlyAndNoToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pace")
	s := open(t, dir, "https://api.example.test", token)
	_ = s.Update(func([]byte) ([]byte, error) { return []byte(`{"version":1}`), nil })
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
	if _, err := Open(filepath.Join(file, "pace"), "https://api.example.test", token); err == nil {
		t.Error("a directory under a file opened")
	}
	loose := t.TempDir()
	_ = os.WriteFile(filepath.Join(loose, "key"), bytes.Repeat([]byte{1}, 32), 0o644)
	if _, err := Open(loose, "https://api.example.test", token); err == nil {
		t.Error("a key readable by others was used")
	}
	short := t.TempDir()
	_ = os.WriteFile(filepath.Join(short, "key"), []byte("guess"), 0o600)
	if _, err := Open(short, "https://api.example.test", token); err == nil {
		t.Error("a key it did not make was used")
	}
}

// TestGone_aProcessThatDies: another process's member is alive while it
// runs, and gone, its file removed, once it is killed.
func TestGone_aProcessThatDies(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMember$")
	cmd.Env = append(os.Environ(), "PACESHARE_HELPER_DIR="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	other := line[:len(line)-1]
	s := open(t, dir, "https://api.example.test", token)
	if gone := s.Gone([]string{other}); len(gone) != 0 {
		t.Fatalf("a running process's member is gone: %v", gone)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if gone := s.Gone([]string{other, s.member}); len(gone) != 1 || gone[0] != other {
		t.Fatalf("gone %v: want the killed process's %s only", gone, other)
	}
	if _, err := os.Stat(s.livePath(other)); !os.IsNotExist(err) {
		t.Fatalf("the ended member's file stays (%v)", err)
	}
	if gone := s.Gone([]string{"../key", "deadbeef"}); len(gone) != 1 || gone[0] != "deadbeef" {
		t.Fatalf("gone %v: want only the member that never was", gone)
	}
}

// TestHelperMember joins a state and holds it until killed.
func TestHelperMember(t *testing.T) {
	dir := os.Getenv("PACESHARE_HELPER_DIR")
	if dir == "" {
		t.Skip("run by TestGone_aProcessThatDies")
	}
	s, err := Open(dir, "https://api.example.test", token)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(s.Member())
	select {}
}

// TestOpen_sweepsEndedMembers: liveness files that processes left behind
// go when another joins.
func TestOpen_sweepsEndedMembers(t *testing.T) {
	dir := t.TempDir()
	_ = open(t, dir, "https://api.example.test", token)
	left := filepath.Join(dir, "0123.abcd.live")
	_ = os.WriteFile(left, nil, 0o600)
	_ = open(t, dir, "https://api.example.test", token)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("an ended member's file stays (%v)", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.live")); len(files) != 2 {
		t.Fatalf("liveness files %v: want the two open stores'", files)
	}
}

// TestOpen_forgetsOldStates: a state no process touched for a day goes
// when another process joins; a recent one stays.
func TestOpen_forgetsOldStates(t *testing.T) {
	dir := t.TempDir()
	old := open(t, dir, "https://old.example.test", token)
	_ = old.Update(func([]byte) ([]byte, error) { return []byte("old"), nil })
	recent := open(t, dir, "https://recent.example.test", token)
	_ = recent.Update(func([]byte) ([]byte, error) { return []byte("recent"), nil })
	day := time.Now().Add(-KeepUnused - time.Hour)
	if err := os.Chtimes(old.path(".json"), day, day); err != nil {
		t.Fatal(err)
	}
	_ = open(t, dir, "https://other.example.test", token)
	if _, err := os.Stat(old.path(".json")); !os.IsNotExist(err) {
		t.Errorf("a state untouched for a day stays (%v)", err)
	}
	if _, err := os.Stat(recent.path(".json")); err != nil {
		t.Errorf("a recent state went: %v", err)
	}
}

func open(t *testing.T, dir, base, token string) *Store {
	t.Helper()
	s, err := Open(dir, base, token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkUpdate is one step's cost: the lock, a read and a write of a
// state the size a Pacer saves.
func BenchmarkUpdate(b *testing.B) {
	s, err := Open(b.TempDir(), "https://api.example.test", token)
	if err != nil {
		b.Fatal(err)
	}
	state := bytes.Repeat([]byte{7}, 600)
	for b.Loop() {
		if err := s.Update(func([]byte) ([]byte, error) { return state, nil }); err != nil {
			b.Fatal(err)
		}
	}
}
