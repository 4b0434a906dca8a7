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
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// openState opens the state the directory names now, unless it is the
// one open already. The lock is held.
func (s *Store) openState() error {
	path := s.path(".state")
	if s.state != nil {
		if same(s.state, path) {
			return nil
		}
		_ = s.state.Close()
		s.state = nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return err
	}
	s.state = f
	return nil
}

// frame opens every state: a magic, then the length and CRC-32 of what
// follows it.
const frame = "BPSTATE1"

// read returns the state in its frame: nil when the file is empty, and
// nil with pace.ErrHealed when it is damaged.
func (s *Store) read() ([]byte, error) {
	info, err := s.state.Stat()
	if err != nil || info.Size() == 0 {
		return nil, err
	}
	b := make([]byte, info.Size())
	if _, err := s.state.ReadAt(b, 0); err != nil {
		return nil, err
	}
	head := len(frame) + 8
	if len(b) < head || string(b[:len(frame)]) != frame {
		return nil, fmt.Errorf("%w: %s is not a state this provider wrote", pace.ErrHealed, s.state.Name())
	}
	n, sum := binary.BigEndian.Uint32(b[len(frame):]), binary.BigEndian.Uint32(b[len(frame)+4:])
	if uint64(n) > uint64(len(b)-head) || crc32.ChecksumIEEE(b[head:head+int(n)]) != sum {
		return nil, fmt.Errorf("%w: %s is cut short or changed", pace.ErrHealed, s.state.Name())
	}
	return b[head : head+int(n)], nil
}

// write replaces the state, in place, in its frame.
func (s *Store) write(state []byte) error {
	b := make([]byte, 0, len(frame)+8+len(state))
	b = append(b, frame...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(state)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(state))
	b = append(b, state...)
	if _, err := s.state.WriteAt(b, 0); err != nil {
		return err
	}
	return s.state.Truncate(int64(len(b)))
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

// usable refuses dir unless it is a directory, not a link to one, and the
// user's own (owned: own_unix.go, own_windows.go).
func usable(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 || !info.IsDir() {
		return fmt.Errorf("%s is not a directory but a link or a file: the pace is shared only in a directory of the user's own", dir)
	}
	return owned(dir, info)
}

func (s *Store) path(suffix string) string { return filepath.Join(s.dir, s.name+suffix) }

func (s *Store) livePath(member string) string { return s.path("." + member + ".live") }

// readKey reads the directory's key, making it on first use, under a lock
// of its own so that two first processes agree on one.
func readKey(dir string) ([]byte, error) {
	l := flock.New(filepath.Join(dir, "key.lock"), flock.SetFlag(os.O_RDWR|os.O_CREATE|noFollow), flock.SetPermissions(0o600))
	if err := l.Lock(); err != nil {
		return nil, err
	}
	defer func() { _ = l.Unlock() }()
	path := filepath.Join(dir, "key")
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		return key, create(path, key)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	key := make([]byte, 33)
	n, _ := f.Read(key)
	if n != 32 {
		return nil, fmt.Errorf("%s is not a key this provider made", path)
	}
	if err := userOnly(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key[:32], nil
}

// create writes b to path whole: under a name made fresh and exclusively,
// user-only, then renamed over it.
func create(path string, b []byte) error {
	tmp := path + "." + randomHex(8) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// isName tells a member's name from anything else a state might hold: a
// name is only ever joined to a path here.
func isName(m string) bool {
	return m != "" && strings.Trim(m, "0123456789abcdef") == ""
}
