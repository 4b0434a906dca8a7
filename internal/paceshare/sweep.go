package paceshare

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// The sweep of what ended or went unused (the package doc).

// sweep removes the liveness files earlier versions of the provider left
// for processes that ended (and those left under their joining name), and
// states untouched for KeepUnused, whatever credentials they are for.
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

// ended removes path once the process that locked it has ended.
func ended(path string) {
	l := flock.New(path, flock.SetFlag(os.O_RDWR|noFollow))
	if ok, err := l.TryLock(); err != nil || !ok {
		return
	}
	if same(l, path) {
		_ = os.Remove(path)
	}
	_ = l.Close()
}
