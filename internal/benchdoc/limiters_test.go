package benchdoc

import (
	"strings"
	"testing"
)

// BenchmarkRealLimiters' output as go test -v prints it, with a provider
// from another commit beside this tree's.
var limitersOutput = strings.Split(`    limiters_test.go:170: nginx limit_req, burst 10, loopback, before, 2: 7.10s, 1.02x, 301 requests, 6 refused
    limiters_test.go:170: nginx limit_req, burst 10, loopback, now, 2: 7.20s, 1.03x, 301 requests, 6 refused
    limiters_test.go:189: targets: median <= 1.15x, worst <= 1.25x, refused <= 3%
        | limiter | network | before | now |
        |---|---|---|---|
        | nginx limit_req, burst 10 | loopback | 1.02x, worst 1.02x, 2.0% | 1.03x, worst 1.04x, 2.0% |
        | HAProxy http_req_rate | 80 ms, Retry-After: 1 | 1.30x, worst 1.40x, 4.4% | 1.32x, worst 1.34x, 4.4% |
        `, "\n")

func TestLimitersTables(t *testing.T) {
	tables, err := limitersTables(&Record{Lines: limitersOutput})
	if err != nil {
		t.Fatal(err)
	}
	tab := tables[0]
	want := [][]string{{"nginx limit_req, burst 10", "loopback", "1.03x", "1.04x", "2.0%"},
		{"HAProxy http_req_rate", "80 ms, Retry-After: 1", "**1.32x**", "**1.34x**", "**4.4%**"}}
	if len(tab.Rows) != 2 || strings.Join(tab.Rows[0], "|") != strings.Join(want[0], "|") || strings.Join(tab.Rows[1], "|") != strings.Join(want[1], "|") {
		t.Errorf("rows %q, want this tree's column, bold past a target: %q", tab.Rows, want)
	}
	if !strings.Contains(tab.Note, "2 plans a row") || !strings.Contains(tab.Note, "median <= 1.15x, worst <= 1.25x, refused <= 3%") {
		t.Errorf("note %q", tab.Note)
	}
	if _, err := limitersTables(&Record{Lines: limitersOutput[:2]}); err == nil {
		t.Error("output cut before the table read")
	}
}

// With the provider told the limit beside it, the table shows what
// learning costs, bold past its target.
func TestLimitersTables_told(t *testing.T) {
	lines := strings.Split(`    limiters_test.go:190: targets: median <= 1.15x, worst <= 1.25x, refused <= 3%; learning within 0.05x of told
        | limiter | network | now | told |
        |---|---|---|---|
        | nginx limit_req, burst 10 | loopback | 1.03x, worst 1.04x, 2.0% | 1.12x, worst 1.13x, 0.0% |
        | HAProxy http_req_rate | 80 ms, no Retry-After | 1.20x, worst 1.24x, 3.5% | 1.13x, worst 1.14x, 0.0% |
        `, "\n")
	tables, err := limitersTables(&Record{Lines: lines})
	if err != nil {
		t.Fatal(err)
	}
	tab := tables[0]
	want := [][]string{{"nginx limit_req, burst 10", "loopback", "1.03x", "1.04x", "2.0%", "1.12x, 0.0%", "-0.09x"},
		{"HAProxy http_req_rate", "80 ms, no Retry-After", "**1.20x**", "1.24x", "**3.5%**", "1.13x, 0.0%", "**+0.07x**"}}
	if strings.Join(tab.Header, "|") != "limiter|network|median|worst|refused|told|learning costs" || len(tab.Rows) != 2 ||
		strings.Join(tab.Rows[0], "|") != strings.Join(want[0], "|") || strings.Join(tab.Rows[1], "|") != strings.Join(want[1], "|") {
		t.Errorf("header %q, rows %q, want %q", tab.Header, tab.Rows, want)
	}
	if !strings.Contains(tab.Note, "bold past 0.05x") {
		t.Errorf("note %q", tab.Note)
	}
	lines[0] = strings.TrimSuffix(lines[0], "; learning within 0.05x of told")
	if _, err := limitersTables(&Record{Lines: lines}); err == nil {
		t.Error("a told column with no target for it read")
	}
}
