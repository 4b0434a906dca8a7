package benchdoc

import (
	"strings"
	"testing"
)

// TestPacer_'s lines and PACE_BASELINE=1's tables, cut down to one cell.
var simulationLines = strings.Split(`=== RUN   TestPacer_unannounced/bucket_burst_1/80_ms
    pacer_test.go:149: median 1.264x, worst 1.464x, 3.53% refused; target <= 1.15x, <= 1.30x, <= 3.0%; held at <= 1.27x, <= 1.47x, <= 3.6%
=== RUN   TestPacer_announced/quota_100/10s_github/loopback
    pacer_test.go:149: median 1.009x, worst 1.023x, 0.00% refused; target <= 1.12x, <= 1.30x, <= 0.5%
    pacer_test.go:209: loopback: worst 1.042x the plan without a pacer
    pacer_test.go:209: 80 ms: worst 1.027x the plan without a pacer
    baseline_test.go:531: 
        | row | baseline | today |
        |---|---|---|
        | bucket burst 1, 80 ms | 2.72x, 3.08x, 3.8% | -1.46, -1.62, -0.3 |
        
        | against baseline | rows it helps | rows it hurts |
        |---|---|---|
        | today | 26: a; b | 3: c |
        
        | row | all |
        |---|---|
        | bucket burst 1, 80 ms | +0.00, +0.00, +0.0 |
        
        | against all | rows it helps | rows it hurts |
        |---|---|---|
        | today | 0:  | 0:  |
    baseline_test.go:627: 
        | row | today | told the limit | told 0.9 of it | told at its first refusal |
        |---|---|---|---|---|
        | bucket burst 1, 80 ms | **1.26x, 1.46x, 3.5%** | **1.18x, 1.32x, 1.6%** | 1.10x, 1.20x, 0.0% | **1.28x, 1.39x, 2.9%** |`, "\n")

func TestSimulationTables(t *testing.T) {
	tables, err := simulationTables(&Record{Lines: simulationLines})
	if err != nil {
		t.Fatal(err)
	}
	sim, unlimited := tables[0], tables[1]
	want := "bucket burst 1|80 ms|**1.264x**|**1.464x**|**3.53%**|1.27x, 1.47x, 3.6%|2.72x, 3.08x, 3.8%|**1.28x, 1.39x, 2.9%**"
	if got := strings.Join(sim.Rows[0], "|"); got != want {
		t.Errorf("row\n%s\nwant\n%s", got, want)
	}
	if got := strings.Join(sim.Rows[1], "|"); got != "quota 100/10s github|loopback|1.009x|1.023x|0.00%|-|-|-" {
		t.Errorf("a quota's row %s", got)
	}
	if !strings.Contains(sim.Note, "help 26 cells and hurt 3") || !strings.Contains(sim.Note, "Targets (median, worst, refused): 1.15x, 1.30x, 3.0%; 1.12x, 1.30x, 0.5%.") {
		t.Errorf("note %q", sim.Note)
	}
	if got, _ := unlimited.Cell("80 ms", "worst"); got != "1.027x" {
		t.Errorf("unlimited, 80 ms: %q", got)
	}
	if _, err := simulationTables(&Record{Lines: simulationLines[:6]}); err == nil || !strings.Contains(err.Error(), "PACE_BASELINE=1") {
		t.Errorf("no baseline: %v", err)
	}
}
