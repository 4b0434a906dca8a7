// Package paceshare keeps, on local disk, the pace (internal/pace) that
// provider processes on one machine share when they talk to one service
// with the same credentials. No daemon: each process reads and writes the
// state under a file lock, for the few microseconds a step takes.
//
// A directory holds, all readable by the user alone:
//   - key: 32 random bytes made on first use. A state's name is an HMAC of
//     the base address and the token under it, so processes with the same
//     credentials meet at one state and the name gives neither away (a key
//     compiled into the binary would let anyone test a guessed token).
//   - NAME.json, the state, written in place (a rename per step took 25
//     times as long) in a frame of its length and CRC-32: a state cut short
//     or damaged is told from a whole one, and what follows it is ignored.
//   - NAME.lock, locked around each step; the system frees the lock of a
//     process that dies.
//   - NAME.MEMBER.live, one per process, locked for the process's life: a
//     member whose file can be locked by another has ended, and its
//     requests in flight no longer count (pace.LivenessEvery).
//
// A process that joins removes the liveness files of processes that ended,
// and the states no process touched for KeepUnused.
package paceshare

import (
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
	"runtime"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Store is one process's view of a shared state (pace.Shared).
type Store struct {
	dir, name, member string
	lock              *flock.Flock // NAME.lock
	state             *os.File     // NAME.json, open for the Store's life
	live              *flock.Flock // NAME.MEMBER.live, held until Close
}

// Open joins the state shared by the processes that talk to base with
// token, in dir (made, user-only, if it is missing).
func Open(dir, base, token string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := readKey(dir)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("browserprofile pace\x00" + base + "\x00" + token))
	s := &Store{dir: dir, name: hex.EncodeToString(mac.Sum(nil)[:16]), member: randomHex(8)}
	s.sweep()
	s.lock = flock.New(s.path(".lock"), flock.SetPermissions(0o600))
	if s.state, err = os.OpenFile(s.path(".json"), os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, err
	}
	s.live = flock.New(s.livePath(s.member), flock.SetPermissions(0o600))
	if ok, err := s.live.TryLock(); err != nil || !ok {
		_ = s.state.Close()
		return nil, errors.Join(fmt.Errorf("locking %s", s.live.Path()), err)
	}
	return s, nil
}

// Member names this process among those sharing the state.
func (s *Store) Member() string { return s.member }

// Update calls f with the state last saved (nil when there is none) under
// the state's lock, and saves what f returns unless it fails.
func (s *Store) Update(f func([]byte) ([]byte, error)) error {
	if err := s.lock.Lock(); err != nil {
		return err
	}
	defer func() { _ = s.lock.Unlock() }()
	saved, err := s.read()
	if err != nil {
		return err
	}
	next, err := f(saved)
	if err != nil {
		return err
	}
	return s.write(next)
}

// frame opens every state: a magic, then the length and CRC-32 of what
// follows it.
const frame = "BPSTATE1"

// read returns the state in its frame: nil when the file is empty.
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
		return nil, fmt.Errorf("%s is not a state this provider wrote", s.state.Name())
	}
	n, sum := binary.BigEndian.Uint32(b[len(frame):]), binary.BigEndian.Uint32(b[len(frame)+4:])
	if uint64(n) > uint64(len(b)-head) || crc32.ChecksumIEEE(b[head:head+int(n)]) != sum {
		return nil, fmt.Errorf("%s is damaged", s.state.Name())
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

// Gone tells which of members have ended: their file is not locked, or
// not there. It removes the files of those it finds ended.
func (s *Store) Gone(members []string) []string {
	var gone []string
	for _, m := range members {
		if m == s.member || !isName(m) {
			continue
		}
		if ended(s.livePath(m)) {
			gone = append(gone, m)
		}
	}
	return gone
}

// Close leaves the state: this process's liveness file goes.
func (s *Store) Close() error {
	path := s.live.Path()
	return errors.Join(s.state.Close(), s.live.Close(), os.Remove(path))
}

// KeepUnused is how long a state no process touched is kept: the states of
// credentials no longer used, or of stand-ins on ports long closed, go.
const KeepUnused = 24 * time.Hour

// sweep removes the liveness files of processes that ended without a word,
// and states untouched for KeepUnused, whatever credentials they are for.
func (s *Store) sweep() {
	files, _ := filepath.Glob(filepath.Join(s.dir, "*.live"))
	for _, f := range files {
		if f != s.livePath(s.member) {
			ended(f)
		}
	}
	states, _ := filepath.Glob(filepath.Join(s.dir, "*.json"))
	for _, f := range states {
		if info, err := os.Stat(f); err == nil && time.Since(info.ModTime()) > KeepUnused {
			forget(strings.TrimSuffix(f, ".json"))
		}
	}
}

// forget removes the state at base (.json, .lock) if no process holds it.
func forget(base string) {
	l := flock.New(base+".lock", flock.SetPermissions(0o600))
	if ok, err := l.TryLock(); err != nil || !ok {
		return
	}
	defer func() { _ = l.Close() }()
	_ = os.Remove(base + ".json")
	_ = os.Remove(base + ".lock")
}

// ended tells whether the process that locked path has ended, removing the
// file if it has.
func ended(path string) bool {
	l := flock.New(path, flock.SetFlag(os.O_RDWR))
	ok, err := l.TryLock()
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if !ok {
		return false
	}
	_ = l.Close()
	_ = os.Remove(path)
	return true
}

func (s *Store) path(suffix string) string { return filepath.Join(s.dir, s.name+suffix) }

func (s *Store) livePath(member string) string { return s.path("." + member + ".live") }

// readKey reads the directory's key, making it on first use, under a lock
// of its own so that two first processes agree on one.
func readKey(dir string) ([]byte, error) {
	l := flock.New(filepath.Join(dir, "key.lock"), flock.SetPermissions(0o600))
	if err := l.Lock(); err != nil {
		return nil, err
	}
	defer func() { _ = l.Unlock() }()
	path := filepath.Join(dir, "key")
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
		return key, replace(path, path+".tmp", key)
	}
	if err != nil {
		return nil, err
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("%s is not a key this provider made", path)
	}
	if info, err := os.Stat(path); err != nil || runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return nil, errors.Join(fmt.Errorf("%s is readable by others", path), err)
	}
	return key, nil
}

// replace writes b to path whole: to tmp, user-only, then renamed over it.
func replace(path, tmp string, b []byte) error {
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
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
