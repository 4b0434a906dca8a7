package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// The CHANGELOG is written as HashiCorp's providers write theirs: a
// section per version, newest first, its changes under FEATURES,
// ENHANCEMENTS, BUG FIXES, SECURITY, NOTES or BREAKING CHANGES, one line
// each, naming what it touches, in at most maxEntry characters: what
// changed for a user, the how left to the docs. A version with no release before it says
// what it offers: nothing it fixes, nothing it "no longer" does, as no
// user met the code before it.
var (
	versionLine = regexp.MustCompile(`^## \d+\.\d+\.\d+ \((Unreleased|[A-Z][a-z]+ \d{1,2}, \d{4})\)$`)
	sections    = map[string]bool{"FEATURES:": true, "ENHANCEMENTS:": true, "BUG FIXES:": true, "SECURITY:": true,
		"NOTES:": true, "BREAKING CHANGES:": true}
	maxEntry  = 200
	entryLine = regexp.MustCompile("^\\* (\\*\\*New (Data Source|Resource):\\*\\* `browserprofile_\\w+`|" +
		"(provider|docs|data-source/browserprofile_\\w+): \\S.*)$")
)

func TestChangelog_isWrittenForUsers(t *testing.T) {
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var versions []int // the line of each version's heading
	for i, line := range lines {
		switch {
		case line == "":
		case strings.HasPrefix(line, "## "):
			if !versionLine.MatchString(line) {
				t.Errorf("line %d: %q: want ## X.Y.Z (Unreleased) or ## X.Y.Z (Month D, YYYY)", i+1, line)
			}
			versions = append(versions, i)
		case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "*"):
			if !sections[line] {
				t.Errorf("line %d: %q is not a section HashiCorp's changelogs use", i+1, line)
			}
		case !entryLine.MatchString(line):
			t.Errorf("line %d: %q: want one line, \"* provider: ...\", \"* data-source/browserprofile_x: ...\", \"* docs: ...\" or a New Data Source", i+1, line)
		case utf8.RuneCountInString(line) > maxEntry:
			t.Errorf("line %d runs to %d characters, past %d: say what changed for a user, and leave the how to the docs", i+1, utf8.RuneCountInString(line), maxEntry)
		}
	}
	if len(versions) == 0 || versions[0] != 0 {
		t.Fatal("CHANGELOG.md does not begin with a version's heading")
	}
	first := lines[versions[len(versions)-1]:] // the first release: no user met the code before it
	for _, line := range first {
		if line == "BUG FIXES:" || strings.Contains(line, "no longer") {
			t.Errorf("the first release says %q: it offers, it fixes nothing a user met", line)
		}
	}
}
