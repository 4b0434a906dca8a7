package paceshare

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

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
