package benchdoc

import (
	"fmt"
	"regexp"
	"strings"
)

// Document is BENCHMARKS.md as written from the recordings under root,
// and its tables by ID. It fails when an area's recording is missing,
// does not read, or is older than a change to what it measures.
func Document(root string) (string, map[string]*Table, error) {
	var b strings.Builder
	b.WriteString(intro)
	byID := map[string]*Table{}
	for _, a := range Areas {
		r, err := ReadRecord(root, a.Name)
		if err != nil {
			return "", nil, err
		}
		if r.Uncommitted {
			return "", nil, fmt.Errorf("benchmarks/%s.txt measured a tree that differed from %.12s: commit, then record it again", a.Name, r.Commit)
		}
		changed, err := Stale(root, a, r)
		if err != nil {
			return "", nil, err
		}
		if len(changed) > 0 {
			return "", nil, fmt.Errorf("benchmarks/%s.txt measured %.12s, and what it measures has changed since (%s): record it again with make bench-record AREAS=%s",
				a.Name, r.Commit, strings.Join(changed, ", "), a.Name)
		}
		tables, err := a.Tables(r)
		if err != nil {
			return "", nil, fmt.Errorf("benchmarks/%s.txt: %w", a.Name, err)
		}
		fmt.Fprintf(&b, "\n## %s\n\n", a.Title)
		fmt.Fprintf(&b, "Measured %s at `%.12s` (%q) on %s, by `%s` (`benchmarks/%s.txt`, exit %s). Nothing it measures has changed since.\n",
			strings.TrimSuffix(r.Date, "Z"), r.Commit, r.Subject, r.Machine, a.Command, a.Name, r.Exit)
		for _, t := range tables {
			if byID[t.ID] != nil {
				return "", nil, fmt.Errorf("two tables are named %q", t.ID)
			}
			byID[t.ID] = t
			fmt.Fprintf(&b, "\n### %s (`%s`)\n\n%s\n\n", t.Title, t.ID, t.Note)
			t.markdown(&b)
		}
	}
	return b.String(), byID, nil
}

const intro = `# Benchmarks

Today's figures, each table with its target. Written by ` + "`make benchmarks`" + ` (` + "`internal/benchdoc`" + `)
from the whole output that ` + "`make bench-record`" + ` kept of each area's measuring
targets and switches in ` + "`benchmarks/`" + `: nothing here is typed. Each area names
the commit it measured, the date and the machine; it may be older than the
head only while nothing it measures (the packages its programs link, the
files that define it, ` + "`go.mod`" + `) has changed since, which the tests check.

A figure quoted elsewhere (the README, the guides, ARCHITECTURE.md) cites
its table as (table · row · column), a row named by its first cells; the
tests hold every such quote to the table. To compare with another build:
` + "`git log -p benchmarks/`" + ` shows each recording against the one before, and
what a change was tried against, and why it was dropped, is in its commit's
body.
`

// citation is a figure quoted from a table: "1.12x (limiters · nginx
// limit_req, no burst, loopback · median)".
var citation = regexp.MustCompile(`(\*{0,2})(-?\d[\d,]*(?:\.\d+)?(?:x|%| ms| s| MB| KB| µs)?)\*{0,2} \(([a-z-]+) · ([^·()]+) · ([^·()]+)\)`)

// Quote is one citation found in a page.
type Quote struct {
	Figure, Table, Row, Column string
}

// Quotes are the citations in text.
func Quotes(text string) []Quote {
	var qs []Quote
	for _, m := range citation.FindAllStringSubmatch(strings.Join(strings.Fields(text), " "), -1) {
		qs = append(qs, Quote{Figure: m[2], Table: m[3], Row: strings.TrimSpace(m[4]), Column: strings.TrimSpace(m[5])})
	}
	return qs
}

// Check tells whether q repeats its table's cell: the cell itself, or one
// of its figures where the cell holds several.
func Check(q Quote, tables map[string]*Table) error {
	t, ok := tables[q.Table]
	if !ok {
		return fmt.Errorf("%s cites a table %q that BENCHMARKS.md does not have", q.Figure, q.Table)
	}
	cell, ok := t.Cell(q.Row, q.Column)
	if !ok {
		return fmt.Errorf("%s cites the row %q and column %q, which the table %q does not have", q.Figure, q.Row, q.Column, q.Table)
	}
	for _, f := range figureOf.FindAllString(cell, -1) {
		if f == q.Figure {
			return nil
		}
	}
	return fmt.Errorf("%s cites (%s · %s · %s), which reads %q", q.Figure, q.Table, q.Row, q.Column, cell)
}

var figureOf = regexp.MustCompile(`-?\d[\d,]*(?:\.\d+)?(?:x|%| ms| s| MB| KB| µs)?`)

// Uncited is text with its whitespace folded and every citation, with the
// figure it cites, taken out: what is left quotes nothing from a table.
func Uncited(text string) string {
	return citation.ReplaceAllString(strings.Join(strings.Fields(text), " "), "")
}
