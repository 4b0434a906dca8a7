package benchdoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recording writes benchmarks/AREA.txt under a new directory, headed as
// bench-record heads it, and returns the directory.
func recording(t *testing.T, area, header, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "benchmarks"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := header + body
	if err := os.WriteFile(filepath.Join(dir, "benchmarks", area+".txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const header = "# area: scale\n# commit: 0123456789012345678901234567890123456789 test: a subject\n" +
	"# date: 2026-12-06T05:00:00Z\n# machine: 2 cores, a processor\n"

func TestReadRecord_header(t *testing.T) {
	dir := recording(t, "scale", header, "# uncommitted: yes\n$ go test\n# not a header line\nok\n# exit: 0 after 3 s\n")
	r, err := ReadRecord(dir, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if r.Commit != strings.Repeat("0123456789", 4) || r.Subject != "test: a subject" || r.Date != "2026-12-06T05:00:00Z" ||
		r.Machine != "2 cores, a processor" || r.Exit != "0 after 3 s" || !r.Uncommitted {
		t.Errorf("header read as %+v", r)
	}
	if got := strings.Join(r.Lines, "|"); got != "$ go test|# not a header line|ok" {
		t.Errorf("lines %q", got)
	}
}

// A recording that is missing, of another area, without its header or
// cut short names what to do.
func TestReadRecord_refusesWhatIsNotWhole(t *testing.T) {
	for name, c := range map[string]struct{ area, text, want string }{
		"missing":    {"limiters", "", "is missing: record it with make bench-record AREAS=limiters"},
		"other area": {"scale", strings.Replace(header, "area: scale", "area: bench", 1) + "# exit: 0\n", `records the area "bench"`},
		"no header":  {"scale", "# area: scale\n# exit: 0\n", "has no commit, date or machine"},
		"cut short":  {"scale", header + "ok\n", "its recording did not end"},
	} {
		dir := recording(t, "scale", "", c.text)
		_, err := ReadRecord(dir, c.area)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestTable_cell(t *testing.T) {
	tab := &Table{Header: []string{"limiter", "network", "median"}, Keys: 2,
		Rows: [][]string{{"bucket, burst 1", "loopback", "**1.20x**"}, {"bucket, burst 1", "80 ms", "1.10x"}}}
	if got, ok := tab.Cell("bucket, burst 1, loopback", "median"); !ok || got != "1.20x" {
		t.Errorf("Cell = %q, %v: want 1.20x without its bold", got, ok)
	}
	if _, ok := tab.Cell("bucket, burst 1", "median"); ok {
		t.Error("a row named by only some of its keys was found")
	}
	if _, ok := tab.Cell("bucket, burst 1, 80 ms", "worst"); ok {
		t.Error("a column the table lacks was found")
	}
}
