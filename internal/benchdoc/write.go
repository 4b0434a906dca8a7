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
		date, _, _ := strings.Cut(r.Date, "T")
		cores, cpu, _ := strings.Cut(r.Machine, ", ")
		if cpu == "" {
			cpu = "a processor that gave no name"
		}
		fmt.Fprintf(&b, "\n## %s: %s, `%.12s`, %s\n\n", a.Title, date, r.Commit, cores)
		fmt.Fprintf(&b, "From %s, on %s: `%s` (`benchmarks/%s.txt`), exit %s.\n",
			r.Date, cpu, a.Command, a.Name, r.Exit)
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

Today's figures, written by ` + "`make benchmarks`" + ` from ` + "`make bench-record`" + `'s
output; an area is older than the head only where nothing it measures
changed. Pages cite a figure as (table · row · column), or in a table
whose last column names both, held to its cell.
`

// figure is one figure as the tables print it: a number and its unit.
const figure = `-?\d[\d,]*(?:\.\d+)?(?:x|%| ms| s| MB| KB| µs)?`

var (
	// citation is a figure quoted from a table, bold or not: "1.12x
	// (limiters · nginx limit_req, no burst, loopback · median)".
	citation = regexp.MustCompile(`\*{0,2}(` + figure + `)\*{0,2} \(([a-z-]+) · ([^·()]+) · ([^·()]+)\)`)
	figureOf = regexp.MustCompile(figure)
)

// Quote is one citation found in a page.
type Quote struct {
	Figure, Table, Row, Column string
}

// quoteTable is the last header cell of a page's table of quotes: each of
// its rows names a table and row as "table · row" in that column, and
// each cell between the first column and the last repeats the column of
// the same name.
const quoteTable = "BENCHMARKS.md"

// Quotes are the citations in text, inline and in tables of quotes.
func Quotes(text string) []Quote {
	var qs []Quote
	for _, m := range citation.FindAllStringSubmatch(strings.Join(strings.Fields(text), " "), -1) {
		qs = append(qs, Quote{Figure: m[1], Table: m[2], Row: strings.TrimSpace(m[3]), Column: strings.TrimSpace(m[4])})
	}
	for _, tab := range splitTables(strings.Split(text, "\n")) {
		header := tab[0]
		if len(tab) < 3 || header[len(header)-1] != quoteTable {
			continue
		}
		for _, row := range tab[2:] {
			table, name, _ := strings.Cut(row[len(row)-1], " · ")
			for i := 1; i < len(row)-1 && i < len(header); i++ {
				if row[i] != "" && row[i] != "-" {
					qs = append(qs, Quote{Figure: strings.Trim(row[i], "*"), Table: table, Row: name, Column: header[i]})
				}
			}
		}
	}
	return qs
}

// Check tells whether q repeats its table's cell: the cell itself, or one
// of its figures.
func Check(q Quote, tables map[string]*Table) error {
	t, ok := tables[q.Table]
	if !ok {
		return fmt.Errorf("%s cites a table %q that BENCHMARKS.md does not have", q.Figure, q.Table)
	}
	cell, ok := t.Cell(q.Row, q.Column)
	if !ok {
		return fmt.Errorf("%s cites the row %q and column %q, which the table %q does not have", q.Figure, q.Row, q.Column, q.Table)
	}
	if q.Figure == cell {
		return nil
	}
	for _, f := range figureOf.FindAllString(cell, -1) {
		if f == q.Figure {
			return nil
		}
	}
	return fmt.Errorf("%s cites (%s · %s · %s), which reads %q", q.Figure, q.Table, q.Row, q.Column, cell)
}

// Uncited is text with its tables of quotes, its whitespace folded and
// every citation, with the figure it cites, taken out: what is left quotes
// nothing from a table.
func Uncited(text string) string {
	var kept []string
	inQuotes := false
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if !strings.HasPrefix(l, "|") {
			inQuotes = false
		} else if strings.HasSuffix(l, "| "+quoteTable+" |") {
			inQuotes = true
		}
		if !inQuotes {
			kept = append(kept, line)
		}
	}
	return citation.ReplaceAllString(strings.Join(strings.Fields(strings.Join(kept, "\n")), " "), "")
}
