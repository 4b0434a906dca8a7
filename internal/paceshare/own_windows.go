//go:build windows

package paceshare

import (
	"io/fs"
	"os"
)

// noFollow: os.OpenFile on Windows has no such flag; making a symbolic
// link there takes a privilege others do not have in a user's profile.
const noFollow = 0

// owned: Windows grants by ACL, and the default directory, under
// %LocalAppData%, is the user's alone.
func owned(string, fs.FileInfo) error { return nil }

func userOnly(*os.File) error { return nil }
