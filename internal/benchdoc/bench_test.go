package benchdoc

import (
	"strings"
	"testing"
)

// make bench's lines, as scripts/bench.sh and bench-fleet.sh print them:
// bc writes a ratio under one without its leading zero.
var benchLines = strings.Split(`== (b) 301 reads
  bucket, burst 1, 1:                301 requests, 6 answered 429 (2.0%), 7.10s, 0 errors: wall 1.13x ideal (6.28s)
  bucket, burst 1, 2:                301 requests, 9 answered 429 (3.0%), 7.60s, 0 errors: wall 1.21x ideal (6.28s)
  bucket, burst 1, 3:                301 requests, 0 answered 429 (0%), 6.10s, 0 errors: wall .97x ideal (6.28s)
  told 4 in flight in advance, 1: 9.12s, 301 requests, 0 answered 429
  bucket, burst 1:                   median wall 1.13x ideal, 2.0% answered 429 (core)
== (b2)
  BenchmarkPacing/bucket_burst1-2          2.000% 429s, 1.010x ideal
  BenchmarkPacing/bucket_burst1-2          3.000% 429s, 1.100x ideal
  BenchmarkPacing/bucket_burst1-2          1.000% 429s, 1.050x ideal
== (f)
  BenchmarkFleet/nginx/K=8-2 	       1	 9000 ns/op	         2.4 %refused	         0 failed	         1.02 x_ideal	         0.99 x_span
  BenchmarkFleet/nginx/K=8-2 	       1	 9000 ns/op	         2.0 %refused	         0 failed	         1.12 x_ideal	         0.99 x_span
  nginx/K=8                 1.02x ideal    2.4% refused   0 plans failed  PASS  (span 0.99x)  target <= 1.3x, <= 4% refused
  one plan, Redis 20 ms      1.13x sharing locally  PASS
== (c) Go benchmarks
BenchmarkDecodeListPage/100-2   	   50000	     24000 ns/op	    1200 B/op	       1 allocs/op
BenchmarkPacing/bucket_burst1-2 	       1	  5843593034 ns/op
ok  	github.com/browserprofile/terraform-provider-browserprofile/internal/listing	3.1s
== summary
  (a) provider CPU                   | .50x floor             | target <= 1x     | PASS
  (b) core, worst wall time          | 1.13x ideal            | target <= 1.15x  | PASS`, "\n")

func TestBenchTables(t *testing.T) {
	tables, err := benchTables(&Record{Lines: benchLines})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Table{}
	for _, tab := range tables {
		byID[tab.ID] = tab
	}
	for _, c := range []struct{ table, row, column, want string }{
		{"bench", "(a) provider CPU", "figure", "0.50x floor"},
		{"bench", "(b) core, worst wall time", "target", "<= 1.15x"},
		{"standin", "bucket, burst 1", "median", "1.13x"},
		{"standin", "bucket, burst 1", "worst", "1.21x"},
		{"standin", "bucket, burst 1", "refused", "2.0%"},
		{"in-process", "bucket_burst1", "median", "1.050x"},
		{"in-process", "bucket_burst1", "worst", "1.100x"},
		{"in-process", "bucket_burst1", "refused", "2.000%"},
		{"fleets", "nginx/K=8", "worst", "1.12x"},
		{"fleets", "nginx/K=8", "verdict", "PASS"},
		{"go", "DecodeListPage/100", "per op", "24000 ns/op 1200 B/op 1 allocs/op"},
	} {
		if got, ok := byID[c.table].Cell(c.row, c.column); got != c.want {
			t.Errorf("%s · %s · %s = %q (%v), want %q", c.table, c.row, c.column, got, ok, c.want)
		}
	}
	if len(byID["go"].Rows) != 1 {
		t.Errorf("Go benchmarks %q: want the pacing case left to its own table", byID["go"].Rows)
	}
	if !strings.Contains(byID["standin"].Note, "Target: median <= 1.15x") || !strings.Contains(byID["fleets"].Note, "took 1.13x the same plan sharing on its machine (PASS against") {
		t.Errorf("notes %q, %q", byID["standin"].Note, byID["fleets"].Note)
	}
	if _, err := benchTables(&Record{Lines: benchLines[:8]}); err == nil {
		t.Error("output cut before the summary read")
	}
}
