package benchdoc

import (
	"fmt"
	"strings"
)

// scaleColumns are the columns of TestScale_membersThroughOneRedis' table
// that BENCHMARKS.md keeps: what a fleet took, and what each request cost
// the store.
var scaleColumns = []string{"K", "Redis", "slowest", "median", "refused", "steps / request", "busy steps",
	"commands / request", "bytes / request", "Redis CPU, one core", "fleet's CPU, cores"}

// scaleTables reads TestScale_membersThroughOneRedis' table.
func scaleTables(r *Record) ([]*Table, error) {
	found := lastTable(r.Lines, "K", "Redis")
	if found == nil {
		return nil, fmt.Errorf("scale: no table of fleets: did TestScale_membersThroughOneRedis run with PACE_SCALE=1?")
	}
	index := make([]int, len(scaleColumns))
	for i, c := range scaleColumns {
		index[i] = -1
		for j, h := range found[0] {
			if h == c {
				index[i] = j
			}
		}
		if index[i] < 0 {
			return nil, fmt.Errorf("scale: the table has no column %q", c)
		}
	}
	t := &Table{ID: "scale", Title: "K runs through one Redis", Header: scaleColumns, Keys: 2,
		Note: "K members as goroutines of one process, each its own `paceredis.Store`, ten walkers each, some 2,000 reads " +
			"a fleet, behind one limiter of 50 a second (burst 10), through a real `redis-server` on loopback and 2 ms away; " +
			"the slowest against every read at 50 a second. No target: the many-runs guide's limit."}
	for _, row := range found[2:] {
		cells := make([]string, len(index))
		for i, j := range index {
			if j >= len(row) {
				return nil, fmt.Errorf("scale: a row has %d cells: %q", len(row), strings.Join(row, " | "))
			}
			cells[i] = row[j]
		}
		t.Rows = append(t.Rows, cells)
	}
	return []*Table{t}, nil
}
