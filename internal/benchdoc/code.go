package benchdoc

import (
	"bytes"
	"go/scanner"
	"go/token"
	"slices"
	"strings"
)

// sameCode tells whether two versions of a Go file compile alike: the same
// tokens, comments and layout aside. A comment that is a directive to the
// compiler or the go command (//go:build, //go:embed, //line and the like)
// is code, and a file that imports "C" is compared whole, its preamble
// being C. A recording measures what runs, so a change to comments alone
// leaves it current; anything the scanner cannot read is a change.
func sameCode(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ta, oka := codeTokens(a)
	tb, okb := codeTokens(b)
	return oka && okb && slices.Equal(ta, tb)
}

// codeTokens is src's tokens as "token literal" strings, comments but
// directives dropped, and whether src read whole with no cgo in it.
func codeTokens(src []byte) ([]string, bool) {
	fset := token.NewFileSet()
	var s scanner.Scanner
	ok := true
	s.Init(fset.AddFile("", -1, len(src)), src, func(token.Position, string) { ok = false }, scanner.ScanComments)
	var toks []string
	for {
		_, tok, lit := s.Scan()
		switch {
		case tok == token.EOF:
			return toks, ok
		case tok == token.COMMENT && !directive(lit):
			continue
		case tok == token.SEMICOLON:
			lit = "" // "\n" where inserted, ";" where written: the same code
		case tok == token.STRING && lit == `"C"`:
			return nil, false
		}
		toks = append(toks, tok.String()+" "+lit)
	}
}

// directive tells whether the comment lit speaks to a tool rather than a
// reader.
func directive(lit string) bool {
	return strings.HasPrefix(lit, "//go:") || strings.HasPrefix(lit, "//line ") || strings.HasPrefix(lit, "/*line ") ||
		strings.HasPrefix(lit, "// +build")
}
