package paceshare

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// The members' liveness: each process's file, locked for its life and
// rewritten every Heartbeat; who ended or is stopped; and the sweep of
// what ended or went unused (the package doc).

// join makes this process's liveness file, locked before any other
// process can see it under its name.
func (s *Store) join() error {
	joining := s.path("." + s.member + ".join")
	f, err := os.OpenFile(joining, os.O_RDWR|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return err
	}
	l := flock.New(joining, flock.SetFlag(os.O_RDWR|noFollow))
	if ok, err := l.TryLock(); err != nil || !ok {
		_ = f.Close()
		_ = os.Remove(joining)
		return errors.Join(fmt.Errorf("locking %s", joining), err)
	}
	if err = writeBeat(f); err == nil {
		err = os.Rename(joining, s.livePath(s.member))
	}
	if err != nil {
		_ = l.Close()
		_ = f.Close()
		_ = os.Remove(joining)
		return err
	}
	s.live, s.beat = l, f
	return nil
}

// heartbeat writes the time to the liveness file every Heartbeat, until
// Close: a process that is stopped writes nothing.
func (s *Store) heartbeat() {
	defer s.closed.Done()
	tick := time.NewTicker(Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			_ = writeBeat(s.beat)
		}
	}
}

func writeBeat(f *os.File) error {
	_, err := f.WriteAt(binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano())), 0)
	return err
}

// Gone tells which of members no longer count: their process ended (their
// file is not locked, or not there; it is removed) or is stopped (its
// heartbeat is older than Silent).
func (s *Store) Gone(members []string) []string {
	var gone []string
	for _, m := range members {
		if m == s.member || !isName(m) {
			continue
		}
		if ended(s.livePath(m)) || silent(s.livePath(m)) {
			gone = append(gone, m)
		}
	}
	return gone
}

// sweep removes the liveness files of processes that ended without a word
// (and those left under their joining name), and states untouched for
// KeepUnused, whatever credentials they are for.
func (s *Store) sweep() {
	files, _ := filepath.Glob(filepath.Join(s.dir, "*.live"))
	for _, f := range files {
		ended(f)
	}
	joining, _ := filepath.Glob(filepath.Join(s.dir, "*.join"))
	for _, f := range joining {
		if info, err := os.Lstat(f); err == nil && time.Since(info.ModTime()) > joinUnused {
			ended(f)
		}
	}
	states, _ := filepath.Glob(filepath.Join(s.dir, "*.state"))
	for _, f := range states {
		if info, err := os.Lstat(f); err == nil && time.Since(info.ModTime()) > KeepUnused {
			forget(strings.TrimSuffix(f, ".state"))
		}
	}
}

// forget removes the state at base (.state, .lock), under its lock, if it
// is still untouched for KeepUnused once the lock is held. A process that
// opened either file finds, at its next step, that the directory no longer
// names it, and opens the new one.
func forget(base string) {
	l := flock.New(base+".lock", flock.SetFlag(os.O_RDWR|noFollow))
	if ok, err := l.TryLock(); err != nil || !ok || !same(l, base+".lock") {
		_ = l.Close()
		return
	}
	defer func() { _ = l.Close() }()
	if info, err := os.Lstat(base + ".state"); err == nil && time.Since(info.ModTime()) <= KeepUnused {
		return
	}
	_ = os.Remove(base + ".state")
	_ = os.Remove(base + ".lock")
}

// ended tells whether the process that locked path has ended, removing the
// file if it has.
func ended(path string) bool {
	l := flock.New(path, flock.SetFlag(os.O_RDWR|noFollow))
	ok, err := l.TryLock()
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if !ok {
		return false
	}
	if same(l, path) {
		_ = os.Remove(path)
	}
	_ = l.Close()
	return true
}

// silent tells whether the heartbeat in path is older than Silent.
func silent(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	b := make([]byte, 8)
	if _, err := f.ReadAt(b, 0); err != nil {
		return false // no heartbeat in it: whether it ended is ended's to tell
	}
	return time.Since(time.Unix(0, int64(binary.BigEndian.Uint64(b)))) > Silent
}

func (s *Store) livePath(member string) string { return s.path("." + member + ".live") }

// isName tells a member's name from anything else a state might hold: a
// name is only ever joined to a path here.
func isName(m string) bool {
	return m != "" && strings.Trim(m, "0123456789abcdef") == ""
}
