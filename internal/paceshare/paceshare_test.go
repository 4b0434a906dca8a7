package paceshare

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

const (
	token  = "bp_live_Zx81secretTOKEN"
	format = "9"
)

// bg is the context of steps that nothing cancels.
var bg = context.Background()

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
				err := s.Update(bg, func(b []byte) ([]byte, error) {
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
	_ = s.Update(bg, func(b []byte) ([]byte, error) {
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
	_ = s.Update(bg, func([]byte) ([]byte, error) { return []byte("kept"), nil })
	if err := s.Update(bg, func([]byte) ([]byte, error) { return []byte("lost"), fmt.Errorf("no") }); err == nil {
		t.Fatal("the step's failure was not returned")
	}
	_ = s.Update(bg, func(b []byte) ([]byte, error) {
		if string(b) != "kept" {
			t.Errorf("state %q", b)
		}
		return b, nil
	})
}

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

// TestGone_aProcessThatDies: another process's member is alive while it
// runs, and gone, its file removed, once it is killed.
func TestGone_aProcessThatDies(t *testing.T) {
	dir := t.TempDir()
	cmd, other := helper(t, dir, "member")
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

// TestHelperMember joins a state and holds its place until killed; in
// mode "hold", it holds the state's lock too.
func TestHelperMember(t *testing.T) {
	dir := os.Getenv("PACESHARE_HELPER_DIR")
	if dir == "" {
		t.Skip("run by the tests of other processes")
	}
	s, err := Open(dir, format, "https://api.example.test", token)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("PACESHARE_HELPER_MODE") == "hold" {
		if err := flock.New(s.path(".lock"), flock.SetFlag(os.O_RDWR|os.O_CREATE)).Lock(); err != nil {
			t.Fatal(err)
		}
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
	_ = old.Update(bg, func([]byte) ([]byte, error) { return []byte("old"), nil })
	recent := open(t, dir, "https://recent.example.test", token)
	_ = recent.Update(bg, func([]byte) ([]byte, error) { return []byte("recent"), nil })
	day := time.Now().Add(-KeepUnused - time.Hour)
	if err := os.Chtimes(old.path(".state"), day, day); err != nil {
		t.Fatal(err)
	}
	_ = open(t, dir, "https://other.example.test", token)
	if _, err := os.Stat(old.path(".state")); !os.IsNotExist(err) {
		t.Errorf("a state untouched for a day stays (%v)", err)
	}
	if _, err := os.Stat(recent.path(".state")); err != nil {
		t.Errorf("a recent state went: %v", err)
	}
}

func open(t *testing.T, dir, base, token string) *Store {
	t.Helper()
	s, err := Open(dir, format, base, token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkUpdate is one step's cost: the lock, a read and a write of a
// state the size a Pacer saves.
func BenchmarkUpdate(b *testing.B) {
	s, err := Open(b.TempDir(), format, "https://api.example.test", token)
	if err != nil {
		b.Fatal(err)
	}
	state := bytes.Repeat([]byte{7}, 600)
	for b.Loop() {
		if err := s.Update(bg, func([]byte) ([]byte, error) { return state, nil }); err != nil {
			b.Fatal(err)
		}
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

// TestUpdate_aHeldLockHoldsNoOne: while another process holds the state's
// lock (a run stopped mid-step), a step waits at most LockWait, or until
// its context is done, and says the store is busy; once the lock is let
// go, steps share again.
func TestUpdate_aHeldLockHoldsNoOne(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, "https://api.example.test", token)
	holder, _ := helper(t, dir, "hold")
	if err := s.Update(bg, func(b []byte) ([]byte, error) { return b, nil }); !errors.Is(err, pace.ErrBusy) {
		t.Fatalf("a step under a held lock: %v, want it busy", err)
	}
	// A step while the last one's attempt still waits does not wait.
	if err := s.Update(bg, func(b []byte) ([]byte, error) { return b, nil }); !errors.Is(err, pace.ErrBusy) {
		t.Fatalf("a second step under a held lock: %v, want it busy", err)
	}
	other := open(t, dir, "https://api.example.test", token)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := other.Update(ctx, func(b []byte) ([]byte, error) { return b, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("a step with its context cancelled: %v", err)
	}
	_ = holder.Process.Kill()
	_ = holder.Wait()
	ran := false
	for deadline := time.Now().Add(10 * time.Second); !ran && time.Now().Before(deadline); {
		err := s.Update(bg, func([]byte) ([]byte, error) { ran = true; return []byte("shared"), nil })
		if err != nil && !errors.Is(err, pace.ErrBusy) {
			t.Fatal(err)
		}
	}
	if !ran {
		t.Fatal("steps do not share again once the lock is let go")
	}
}

// TestGone_aStoppedProcess: a process stopped (SIGSTOP) while it shares
// stops counting within Silent and a heartbeat, and counts again once it
// goes on.
func TestGone_aStoppedProcess(t *testing.T) {
	dir := t.TempDir()
	cmd, other := helper(t, dir, "member")
	s := open(t, dir, "https://api.example.test", token)
	if gone := s.Gone([]string{other}); len(gone) != 0 {
		t.Fatalf("a running process's member is gone: %v", gone)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for len(s.Gone([]string{other})) == 0 {
		if time.Since(stopped) > Silent+3*Heartbeat {
			t.Fatalf("a stopped process still counts after %s", time.Since(stopped))
		}
		time.Sleep(Heartbeat / 4)
	}
	if _, err := os.Stat(s.livePath(other)); err != nil {
		t.Fatalf("a stopped process's file was removed: %v", err)
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	for len(s.Gone([]string{other})) != 0 {
		if time.Since(stopped) > Silent+10*Heartbeat {
			t.Fatal("a process that went on again does not count")
		}
		time.Sleep(Heartbeat / 4)
	}
}

// TestOpen_joinersMeetInOneState: many processes joining at once against
// a state untouched for two days (which each may sweep) all step in one
// state.
func TestOpen_joinersMeetInOneState(t *testing.T) {
	dir := t.TempDir()
	first := open(t, dir, "https://api.example.test", token)
	_ = first.Update(bg, func([]byte) ([]byte, error) { return []byte("0"), nil })
	old := time.Now().Add(-2 * KeepUnused)
	_ = os.Chtimes(first.path(".state"), old, old)
	const joiners = 12
	var wg sync.WaitGroup
	for range joiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := open(t, dir, "https://api.example.test", token)
			err := s.Update(bg, func(b []byte) ([]byte, error) {
				n, _ := strconv.Atoi(string(b))
				return []byte(strconv.Itoa(n + 1)), nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// The first store, whose state may have been swept, steps in the
	// joiners' state too.
	_ = first.Update(bg, func(b []byte) ([]byte, error) {
		n, _ := strconv.Atoi(string(b))
		return []byte(strconv.Itoa(n + 1)), nil
	})
	b, _ := os.ReadFile(first.path(".state"))
	if got := string(b[len(frame)+8:]); got != strconv.Itoa(joiners+1) {
		t.Fatalf("the state counts %s steps of %d: some stepped in a state of their own", got, joiners+1)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.live")); len(files) != joiners+1 {
		t.Fatalf("%d liveness files: want one for each of the %d stores", len(files), joiners+1)
	}
}

// TestOpen_formatsApart: stores of one credential in two formats keep
// states of their own.
func TestOpen_formatsApart(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, "https://api.example.test", token)
	b, err := Open(dir, "8", "https://api.example.test", token)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.path(".state") == b.path(".state") {
		t.Fatal("two formats share one state")
	}
}

// helper starts this test binary as another process sharing dir, in mode
// "member" (joins, and holds its place until killed) or "hold" (also holds
// the state's lock), and returns it and its member's name.
func helper(t *testing.T, dir, mode string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMember$")
	cmd.Env = append(os.Environ(), "PACESHARE_HELPER_DIR="+dir, "PACESHARE_HELPER_MODE="+mode)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return cmd, strings.TrimSpace(line)
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}
