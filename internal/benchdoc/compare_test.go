package benchdoc

import (
	"strings"
	"testing"
)

func TestCompareTable(t *testing.T) {
	header := []string{"limiter", "network", "median", "refused"}
	old := &Table{ID: "limiters", Header: header, Keys: 2, Rows: [][]string{
		{"nginx", "loopback", "1.02x", "2.0%"}, {"nginx", "80 ms", "**1.35x**", "3.8%"}, {"gone", "loopback", "1x", "0%"}}}
	now := &Table{ID: "limiters", Header: header, Keys: 2, Rows: [][]string{
		{"nginx", "loopback", "1.02x", "2.0%"}, {"nginx", "80 ms", "1.12x", "3.8%"}, {"new", "loopback", "1x", "0%"}}}
	var b strings.Builder
	compareTable(&b, old, now)
	want := "  limiters · nginx, 80 ms: median 1.35x → 1.12x\n  limiters · new, loopback: new\n" +
		"  limiters · gone, loopback: gone\n  limiters: 1 rows the same\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
