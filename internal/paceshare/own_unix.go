//go:build unix

package paceshare

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// noFollow makes an open fail on a symbolic link rather than follow it.
const noFollow = syscall.O_NOFOLLOW

// owned refuses dir (of info) unless the user owns it and nobody else can
// write it, under parents that are the user's or root's and that others can
// write only with the sticky bit (/tmp), so that nobody else can swap it or
// a name in it.
func owned(dir string, info fs.FileInfo) error {
	if err := mine(dir, info, false); err != nil {
		return err
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for parent := filepath.Dir(resolved); ; parent = filepath.Dir(parent) {
		info, err := os.Lstat(parent)
		if err != nil {
			return err
		}
		if err := mine(parent, info, true); err != nil {
			return err
		}
		if parent == filepath.Dir(parent) {
			return nil
		}
	}
}

// mine refuses what another user owns or can write: a parent may also be
// root's, and writable by others under the sticky bit.
func mine(path string, info fs.FileInfo, parent bool) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	perm := info.Mode().Perm()
	owned := st.Uid == uint32(os.Geteuid()) || parent && st.Uid == 0
	guarded := perm&0o022 == 0 || parent && info.Mode()&fs.ModeSticky != 0
	switch {
	case !owned:
		return fmt.Errorf("%s is owned by another user (uid %d): the pace is shared only in a directory of the user's own", path, st.Uid)
	case !guarded:
		return fmt.Errorf("%s is writable by others (mode %04o): the pace is shared only in a directory nobody else can write", path, perm)
	}
	return nil
}

// userOnly refuses a file others can read or write, or that another user
// owns.
func userOnly(f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid != uint32(os.Geteuid()) {
		return fmt.Errorf("owned by another user (uid %d)", st.Uid)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("readable by others (mode %04o)", info.Mode().Perm())
	}
	return nil
}
