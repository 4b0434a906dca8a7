package benchdoc

import "testing"

func TestSameCode(t *testing.T) {
	const was = "package p\n\n// f is one.\nfunc f() int { return 1 } // one\n"
	for _, c := range []struct {
		name, now string
		same      bool
	}{
		{"the same bytes", was, true},
		{"a comment reworded", "package p\n\n// f is the number one,\n// reflowed.\nfunc f() int { return 1 }\n", true},
		{"a block comment added", "package p\n\n/* one */\nfunc f() int { return /* it */ 1 }\n", true},
		{"a value changed", "package p\n\n// f is one.\nfunc f() int { return 2 }\n", false},
		{"a build constraint", "//go:build linux\n\npackage p\n\nfunc f() int { return 1 }\n", false},
		{"a directive", "package p\n\n//go:noinline\nfunc f() int { return 1 }\n", false},
		{"a line moved by a comment across lines", "package p\n\nfunc f() int { return /*\n*/ 1 }\n", false},
		{"gone", "", false},
		{"unreadable", "package p\n\nfunc f() int { return '' }\n", false},
	} {
		if got := sameCode([]byte(was), []byte(c.now)); got != c.same {
			t.Errorf("%s: sameCode = %v, want %v", c.name, got, c.same)
		}
	}
	cgo := "package p\n\n// #include <stdio.h>\nimport \"C\"\n"
	if sameCode([]byte(cgo), []byte("package p\n\n// #include <stdlib.h>\nimport \"C\"\n")) {
		t.Error("a cgo preamble changed: want a change")
	}
}
