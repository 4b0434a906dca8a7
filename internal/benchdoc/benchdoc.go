// Package benchdoc writes BENCHMARKS.md from what measured it, so that no
// figure there is typed. make bench-record (scripts/bench-record.sh) runs
// each area's targets and switches and keeps their whole output in
// benchmarks/AREA.txt, headed by the commit measured, the date and the
// machine; each Area here reads its file into tables, and Document lays
// them out under headings that name where they come from.
//
// A figure quoted anywhere else cites its table as (table · row · column)
// and is held to it by the repository's tests (Quotes, Check). An area's file may be
// older than the head only while nothing it measures has changed since its
// commit (Stale): the provider's packages and those its harness links, the
// files that define its benchmarks, and go.mod.
package benchdoc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Record is one area's output as make bench-record kept it.
type Record struct {
	Area    string
	Commit  string // the commit measured, in full
	Subject string // its subject line
	Date    string // when the recording began, UTC
	Machine string // its cores and processor
	Exit    string // the commands' exit status and time, as recorded
	// Uncommitted is a recording of a tree that differed from Commit: for
	// a comparison before committing, never for BENCHMARKS.md.
	Uncommitted bool
	Lines       []string
}

// ReadRecord reads benchmarks/AREA.txt under dir.
func ReadRecord(dir, area string) (*Record, error) {
	path := filepath.Join(dir, "benchmarks", area+".txt")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing: record it with make bench-record AREAS=%s", path, area)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseRecord(f, path, area)
}

// parseRecord reads a recording of area from f, named path in errors.
func parseRecord(f io.Reader, path, area string) (*Record, error) {
	r := &Record{}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		key, value, header := strings.Cut(strings.TrimPrefix(line, "# "), ": ")
		if !strings.HasPrefix(line, "# ") || !header {
			r.Lines = append(r.Lines, line)
			continue
		}
		switch key {
		case "area":
			r.Area = value
		case "commit":
			r.Commit, r.Subject, _ = strings.Cut(value, " ")
		case "date":
			r.Date = value
		case "machine":
			r.Machine = value
		case "exit":
			r.Exit = value
		case "uncommitted":
			r.Uncommitted = value == "yes"
		default:
			r.Lines = append(r.Lines, line)
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case r.Area != area:
		return nil, fmt.Errorf("%s records the area %q, not %q", path, r.Area, area)
	case len(r.Commit) != 40 || r.Date == "" || r.Machine == "":
		return nil, fmt.Errorf("%s has no commit, date or machine in its header: record it again", path)
	case r.Exit == "":
		return nil, fmt.Errorf("%s has no exit line: its recording did not end; record it again", path)
	}
	return r, nil
}

// Table is one table of BENCHMARKS.md. A row is named by its first Keys
// cells, joined by ", "; a column by its header.
type Table struct {
	ID     string // what a citation names it by
	Title  string
	Note   string // what it measures, against what target
	Header []string
	Keys   int
	Rows   [][]string
}

// Cell is the figure at row and column, as the table prints it, bold
// marks aside.
func (t *Table) Cell(row, column string) (string, bool) {
	c := -1
	for i, h := range t.Header {
		if h == column {
			c = i
		}
	}
	if c < 0 {
		return "", false
	}
	for _, r := range t.Rows {
		if t.rowName(r) == row {
			return strings.Trim(r[c], "*"), true
		}
	}
	return "", false
}

func (t *Table) rowName(r []string) string {
	return strings.Join(r[:t.Keys], ", ")
}

// markdown is the table as Markdown.
func (t *Table) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(t.Header, " | "), strings.Repeat("---|", len(t.Header)))
	for _, r := range t.Rows {
		fmt.Fprintf(b, "| %s |\n", strings.Join(r, " | "))
	}
}

// over bolds cells[i] when the figure got is past the target want.
func over(cells []string, i int, got, want string) {
	// Both come from the regexps' digits: a figure that did not parse
	// would be no more than nothing, and never bold.
	g, _ := strconv.ParseFloat(got, 64)
	w, _ := strconv.ParseFloat(want, 64)
	if g > w {
		cells[i] = "**" + cells[i] + "**"
	}
}

// lastTable is the last table in lines with rows under a header whose
// first two cells are first and second, or nil.
func lastTable(lines []string, first, second string) [][]string {
	var found [][]string
	for _, tab := range splitTables(lines) {
		if len(tab) > 2 && len(tab[0]) > 1 && tab[0][0] == first && tab[0][1] == second {
			found = tab
		}
	}
	return found
}

// splitTables are the Markdown tables in lines (as a test's log indents
// them), each a list of rows of trimmed cells, the separator row kept.
func splitTables(lines []string) [][][]string {
	var tables [][][]string
	var cur [][]string
	for _, line := range lines {
		l := strings.TrimSpace(line)
		if !strings.HasPrefix(l, "|") || !strings.HasSuffix(l, "|") {
			if cur != nil {
				tables, cur = append(tables, cur), nil
			}
			continue
		}
		cells := strings.Split(l[1:len(l)-1], "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		cur = append(cur, cells)
	}
	if cur != nil {
		tables = append(tables, cur)
	}
	return tables
}
