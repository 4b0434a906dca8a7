// Package paceshare keeps, on local disk, the pace (internal/pace) that
// provider processes on one machine share when they talk to one service
// with the same credentials. No daemon: each process reads and writes the
// state under a file lock, for the few microseconds a step takes.
//
// The directory must be the user's own: owned by the user and writable by
// nobody else, under parents that are the user's or root's and that others
// can write only where the sticky bit keeps them from renaming what is not
// theirs (as OpenSSH's StrictModes and GnuPG's home checks). Anything else
// is refused, and the process paces alone. No name below is followed
// through a symbolic link; each is opened with O_NOFOLLOW.
//
// A directory holds, all readable by the user alone:
//   - key: 32 random bytes made on first use, written under a fresh name
//     made exclusively, then renamed. A state's name is an HMAC of the base
//     address and the token under it, so processes with the same
//     credentials meet at one state and the name gives neither away (a key
//     compiled into the binary would let anyone test a guessed token). The
//     state format's version is part of the name: provider versions side by
//     side share among themselves, each in its own format.
//   - NAME.state, the state, written in place (a rename per step took 25
//     times as long) in a frame of its length and CRC-32: a state cut short
//     or damaged is told from a whole one, and what follows it is ignored.
//     A damaged state is replaced by a fresh one at the next step.
//   - NAME.lock, locked around each step; the system frees the lock of a
//     process that dies. A step waits for it at most LockWait: a process
//     stopped while it holds the lock (Ctrl-Z, a paused job) holds the
//     others no longer (ErrBusy).
//   - NAME.MEMBER.live, one per process, locked for the process's life and
//     rewritten every Heartbeat with the time: a member whose file another
//     process can lock has ended, and one whose time is older than Silent
//     is stopped; the requests in flight of either no longer count
//     (pace.LivenessEvery). It is made and locked under another name, then
//     renamed, so that no process sees it before it is locked.
//
// A process that joins removes the liveness files of processes that ended,
// and the states no process touched for KeepUnused. Removing a state takes
// its lock, and every step checks, once it holds the lock, that the names
// it locked and holds open are still the ones in the directory, opening
// them afresh if not: processes that join while an old state is swept
// still meet in one state.
package paceshare

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

// The store's times.
const (
	// LockWait bounds a step's wait for the state's lock, held for
	// microseconds by a running process, for ever by a stopped one.
	LockWait = 250 * time.Millisecond
	// Heartbeat is how often a process writes the time to its liveness
	// file, and Silent how old that time is when the process is taken to
	// be stopped: its requests in flight no longer count.
	Heartbeat = time.Second
	Silent    = 5 * time.Second
	// KeepUnused is how long a state no process touched is kept: the
	// states of credentials no longer used, or of stand-ins on ports long
	// closed, go.
	KeepUnused = 24 * time.Hour
	// joinUnused is how old a liveness file still under its joining name
	// is when the process that made it died before renaming it.
	joinUnused = time.Minute
)

// ErrBusy is a step that did not get the state's lock within LockWait.
var ErrBusy = fmt.Errorf("another run has held the lock for longer than %s: %w", LockWait, pace.ErrBusy)

// Store is one process's view of a shared state (pace.Shared).
type Store struct {
	dir, name, member string

	mu      sync.Mutex
	state   *os.File      // NAME.state, open from one step to the next
	pending chan struct{} // held while a lock taken too late is still awaited

	live   *flock.Flock // NAME.MEMBER.live's lock, held until Close
	beat   *os.File     // NAME.MEMBER.live, where the heartbeat writes
	stop   chan struct{}
	closed sync.WaitGroup
	close  sync.Once
}

// Open joins the state shared by the processes that talk to base with
// token, in format (the pace state's version), in dir: made, user-only,
// if it is missing, and refused if it is not the user's own.
func Open(dir, format, base, token string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := usable(dir); err != nil {
		return nil, err
	}
	key, err := readKey(dir)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("browserprofile pace\x00" + base + "\x00" + token))
	s := &Store{
		dir:     dir,
		name:    hex.EncodeToString(mac.Sum(nil)[:16]) + "-v" + format,
		member:  randomHex(8),
		pending: make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
	s.sweep()
	if err := s.join(); err != nil {
		return nil, err
	}
	s.closed.Add(1)
	go s.heartbeat()
	return s, nil
}

// Member names this process among those sharing the state.
func (s *Store) Member() string { return s.member }

// Update calls f with the state last saved (nil when there is none, or
// when it was damaged: what f returns replaces it, and Update says so with
// pace.ErrHealed) under the state's lock, and saves what f returns unless
// it fails. It waits for the lock at most LockWait (ErrBusy), and no longer
// than ctx.
func (s *Store) Update(ctx context.Context, f func([]byte) ([]byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Unlock() }()
	if err := s.openState(); err != nil {
		return err
	}
	saved, healed := s.read()
	if healed != nil && !errors.Is(healed, pace.ErrHealed) {
		return healed
	}
	next, err := f(saved)
	if err != nil {
		return err
	}
	if err := s.write(next); err != nil {
		return err
	}
	return healed
}

// lock takes the state's lock, waiting at most LockWait, and makes sure it
// is the lock of the file the directory names now (a sweep may have
// removed the one it opened). A wait that runs out leaves one attempt
// behind, which lets the lock go as soon as it gets it; while it waits,
// later steps do not wait at all.
func (s *Store) lock(ctx context.Context) (*flock.Flock, error) {
	path := s.path(".lock")
	for range 3 {
		l := flock.New(path, flock.SetFlag(os.O_RDWR|os.O_CREATE|noFollow), flock.SetPermissions(0o600))
		ok, err := l.TryLock()
		if err != nil {
			return nil, err
		}
		if !ok {
			if err := s.await(ctx, l); err != nil {
				return nil, err
			}
		}
		if same(l, path) {
			return l, nil
		}
		_ = l.Unlock()
	}
	return nil, fmt.Errorf("%s keeps changing", path)
}

// await blocks on l's lock for LockWait at most, or until ctx is done.
func (s *Store) await(ctx context.Context, l *flock.Flock) error {
	select {
	case s.pending <- struct{}{}:
	default:
		return ErrBusy // the last wait's attempt still waits
	}
	got := make(chan error, 1)
	go func() { got <- l.Lock() }()
	timer := time.NewTimer(LockWait)
	defer timer.Stop()
	var err error
	select {
	case err = <-got:
		<-s.pending
		return err
	case <-timer.C:
		err = ErrBusy
	case <-ctx.Done():
		err = ctx.Err()
	}
	go func() {
		if <-got == nil {
			_ = l.Unlock()
		}
		<-s.pending
	}()
	return err
}

// same tells whether the file held (a lock, or a file open) is the one
// path names now.
func same(held interface{ Stat() (fs.FileInfo, error) }, path string) bool {
	info, err := held.Stat()
	if err != nil {
		return false
	}
	named, err := os.Lstat(path)
	return err == nil && os.SameFile(info, named)
}

// Close leaves the state: the heartbeat stops and this process's liveness
// file goes. A process that ends without it leaves the file to the next
// one that joins, which finds it unlocked.
func (s *Store) Close() error {
	var err error
	s.close.Do(func() {
		close(s.stop)
		s.closed.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.state != nil {
			err = s.state.Close()
		}
		err = errors.Join(err, os.Remove(s.livePath(s.member)), s.live.Close(), s.beat.Close())
	})
	return err
}

func (s *Store) path(suffix string) string { return filepath.Join(s.dir, s.name+suffix) }
