//go:build windows

package paceshare

import (
	"fmt"
	"io/fs"
	"os"
)

// noFollow: os.OpenFile on Windows has no such flag; making a symbolic
// link there takes a privilege others do not have in a user's profile.
const noFollow = 0

// ownDirectory refuses a link or a file. Windows grants by ACL, and the
// default directory, under %LocalAppData%, is the user's alone.
func ownDirectory(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 || !info.IsDir() {
		return fmt.Errorf("%s is not a directory but a link or a file: the pace is shared only in a directory of the user's own", dir)
	}
	return nil
}

func userOnly(*os.File) error { return nil }
