package paceshare

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// The directory: the user's own, and the key a state's name is keyed by
// (the package doc).

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
