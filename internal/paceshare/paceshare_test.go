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
