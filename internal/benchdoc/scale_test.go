package benchdoc

import (
	"strings"
	"testing"
)

func TestScaleTables(t *testing.T) {
	table := func(first string) []string {
		header := "| " + first + " | Redis | slowest | median | refused | each run: slowest, lateness (90th) | steps / request | round trips / request | of them | busy steps | commands / request | bytes / request | Redis CPU, one core | fleet's CPU, cores |"
		return []string{"    scale_test.go:88: ", "        " + header, "        |---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
			"        | 16 | loopback | 1.00x | 0.98x | 0.7% | 1.00x (2ms) | 5.5 | 6.1 | 1, 2 | 0.00% | 9 | 8709 | 5% | 0.13 of 2 |", "        "}
	}
	lines := append(table("K"), table("K, quota")...)
	tables, err := scaleTables(&Record{Lines: lines})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || tables[0].ID != "scale" || tables[1].ID != "scale-quota" || tables[1].Header[0] != "K, quota" {
		t.Fatalf("tables %v: want the bucket's and the quota's", tables)
	}
	for i, want := range []string{"16|loopback|1.00x|0.7%|1.00x (2ms)|6.1|0.00%|8709|5%", "16|loopback|1.00x|0.7%|6.1|0.00%|8709|5%"} {
		if got := strings.Join(tables[i].Rows[0], "|"); got != want {
			t.Errorf("%s: row %q: want the kept columns, %q", tables[i].ID, got, want)
		}
	}
	lines[1] = strings.Replace(lines[1], "busy steps", "busy", 1)
	if _, err := scaleTables(&Record{Lines: lines}); err == nil || !strings.Contains(err.Error(), `no column "busy steps"`) {
		t.Errorf("a column renamed: %v", err)
	}
	if _, err := scaleTables(&Record{Lines: table("K")}); err == nil || !strings.Contains(err.Error(), `no table "K, quota"`) {
		t.Errorf("the quota's table missing: %v", err)
	}
}
