package benchdoc

import (
	"strings"
	"testing"
)

func TestQuotes_andCheck(t *testing.T) {
	tables := map[string]*Table{"limiters": {ID: "limiters", Header: []string{"limiter", "network", "median", "held at"}, Keys: 2,
		Rows: [][]string{{"nginx, no burst", "80 ms", "**1.35x**", "1.27x, 1.47x, 3.6%"}}}}
	text := "Behind nginx 80 ms away a plan took 1.35x\n(limiters · nginx, no burst, 80 ms · median), held at\n" +
		"3.6% (limiters · nginx, no burst, 80 ms · held at), or 1.40x (limiters · nginx, no burst, 80 ms · median)."
	qs := Quotes(text)
	if len(qs) != 3 || qs[0] != (Quote{"1.35x", "limiters", "nginx, no burst, 80 ms", "median"}) {
		t.Fatalf("Quotes = %+v", qs)
	}
	if err := Check(qs[0], tables); err != nil {
		t.Error(err)
	}
	if err := Check(qs[1], tables); err != nil {
		t.Errorf("one figure of a cell of several: %v", err)
	}
	if err := Check(qs[2], tables); err == nil || !strings.Contains(err.Error(), `which reads "1.35x"`) {
		t.Errorf("a figure the cell does not hold: %v", err)
	}
	for _, q := range []Quote{{"1x", "nope", "a", "b"}, {"1x", "limiters", "nginx, no burst, loopback", "median"}} {
		if err := Check(q, tables); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
	if got := Uncited(text); strings.Contains(got, "1.35x") || !strings.Contains(got, "a plan took , held at") {
		t.Errorf("Uncited = %q", got)
	}
}

func TestQuotes_tables(t *testing.T) {
	text := "Before.\n\n| what | median | worst | BENCHMARKS.md |\n|---|---|---|---|\n" +
		"| a plan, 1.99x by eye | **1.35x** | - | limiters · nginx, no burst, 80 ms |\n\nAfter 1.50x.\n"
	qs := Quotes(text)
	if len(qs) != 1 || qs[0] != (Quote{"1.35x", "limiters", "nginx, no burst, 80 ms", "median"}) {
		t.Errorf("Quotes = %+v: want the median alone, the empty worst skipped", qs)
	}
	if got := Uncited(text); got != "Before. After 1.50x." {
		t.Errorf("Uncited = %q: want the table of quotes out", got)
	}
}
