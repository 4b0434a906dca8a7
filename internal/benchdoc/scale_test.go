package benchdoc

import (
	"strings"
	"testing"
)

func TestScaleTables(t *testing.T) {
	header := "| K | Redis | slowest | median | refused | steps / request | of them | busy steps | commands / request | bytes / request | Redis CPU, one core | fleet's CPU, cores |"
	lines := []string{"    scale_test.go:88: ", "        " + header, "        |---|---|---|---|---|---|---|---|---|---|---|---|",
		"        | 16 | loopback | 1.00x | 0.98x | 0.7% | 5.5 | 1, 2 | 0.00% | 9 | 8709 | 5% | 0.13 of 2 |", "        "}
	tables, err := scaleTables(&Record{Lines: lines})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tables[0].Rows[0], "|"); got != "16|loopback|1.00x|0.98x|0.7%|5.5|0.00%|9|8709|5%|0.13 of 2" {
		t.Errorf("row %q: want the kept columns", got)
	}
	lines[1] = strings.Replace(lines[1], "busy steps", "busy", 1)
	if _, err := scaleTables(&Record{Lines: lines}); err == nil || !strings.Contains(err.Error(), `no column "busy steps"`) {
		t.Errorf("a column renamed: %v", err)
	}
}
