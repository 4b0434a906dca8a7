package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/benchdoc"
)

// maxBenchmarkWords is BENCHMARKS.md's length: today's figures, not a
// notebook, some 800 words an area.
const maxBenchmarkWords = 4100

// benchmarks is BENCHMARKS.md as the recordings make it, and its tables:
// written once for the tests that read it (each write asks go list and
// git about every area).
var benchmarks = sync.OnceValues(func() (doc, error) {
	text, tables, err := benchdoc.Document(".")
	return doc{text, tables}, err
})

type doc struct {
	text   string
	tables map[string]*benchdoc.Table
}

// TestBenchmarks_writtenFromTheRecordings: BENCHMARKS.md is what make
// benchmarks writes from benchmarks/, and every recording speaks for the
// head (nothing it measures has changed since its commit).
func TestBenchmarks_writtenFromTheRecordings(t *testing.T) {
	d, err := benchmarks()
	if err != nil {
		t.Fatal(err)
	}
	want := d.text
	got, err := os.ReadFile("BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("BENCHMARKS.md is not what the recordings make: run make benchmarks, and never edit it by hand")
	}
	if words := len(strings.Fields(want)); words > maxBenchmarkWords {
		t.Errorf("BENCHMARKS.md has %d words, past %d: today's figures only", words, maxBenchmarkWords)
	}
}

// quotingPages are the pages that quote measured figures: each quote
// cites its table of BENCHMARKS.md.
func quotingPages(t *testing.T) []string {
	pages := []string{"README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"}
	guides, err := filepath.Glob("templates/guides/*.md.tmpl")
	if err != nil || len(guides) == 0 {
		t.Fatalf("no guides under templates/guides: %v", err)
	}
	return append(pages, guides...)
}

// ratio is a figure as the benchmarks give a time against its ideal.
var ratio = regexp.MustCompile(`\b\d+\.\d+x\b`)

// TestBenchmarks_quotesRepeatTheTables: every figure quoted from
// BENCHMARKS.md cites its table, row and column, and repeats that cell;
// a ratio to an ideal quoted without a citation fails too.
func TestBenchmarks_quotesRepeatTheTables(t *testing.T) {
	d, err := benchmarks()
	if err != nil {
		t.Fatal(err)
	}
	tables := d.tables
	cited := 0
	for _, page := range quotingPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, q := range benchdoc.Quotes(text) {
			cited++
			if err := benchdoc.Check(q, tables); err != nil {
				t.Errorf("%s: %v", page, err)
			}
		}
		bare := benchdoc.Uncited(text)
		for _, r := range ratio.FindAllString(bare, -1) {
			t.Errorf("%s quotes %s with no citation: write it as %s (table · row · column), from BENCHMARKS.md", page, r, r)
		}
	}
	if cited == 0 {
		t.Error("no page cites BENCHMARKS.md: the README's Performance section should")
	}
}
