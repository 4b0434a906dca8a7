package benchdoc

import (
	"fmt"
	"strings"
)

// scaleColumns are the columns of TestScale_membersThroughOneRedis' tables
// that BENCHMARKS.md keeps: what a fleet took, and what each request cost
// the store. The first names the limit.
var scaleColumns = []string{"K", "Redis", "slowest", "median", "refused", "each run: slowest, lateness (90th)",
	"steps / request", "round trips / request", "busy steps", "commands / request", "bytes / request", "Redis CPU, one core", "fleet's CPU, cores"}

// scaleTables reads TestScale_membersThroughOneRedis' tables: the fleets
// behind a bucket, and behind a quota announced on every answer.
func scaleTables(r *Record) ([]*Table, error) {
	bucket, err := scaleTable(r, "K", &Table{ID: "scale", Title: "K runs through one Redis",
		Note: "K members as goroutines of one process, each its own `paceredis.Store`, ten walkers each, some 2,000 reads " +
			"a fleet, behind one limiter of 50 a second (burst 10), through a real `redis-server` on loopback and 2 ms away; " +
			"the slowest against every read at 50 a second, the medians of the runs whose lateness (how late a walker asked, " +
			"the harness's own crowding) is under 10 ms at the 90th percentile. No target: the many-runs guide's limit."})
	if err != nil {
		return nil, err
	}
	quota, err := scaleTable(r, "K, quota", &Table{ID: "scale-quota", Title: "K runs through one Redis, a quota announced",
		Note: "The same fleets against a quota of 100 each 2 s announced on every answer (windows opened by a request, GitHub's headers)."})
	if err != nil {
		return nil, err
	}
	return []*Table{bucket, quota}, nil
}

// scaleTable reads the table whose first header cell is first into t.
func scaleTable(r *Record, first string, t *Table) (*Table, error) {
	found := lastTable(r.Lines, first, "Redis")
	if found == nil {
		return nil, fmt.Errorf("scale: no table %q of fleets: did TestScale_membersThroughOneRedis run with PACE_SCALE=1?", first)
	}
	t.Header, t.Keys = append([]string{first}, scaleColumns[1:]...), 2
	index := make([]int, len(t.Header))
	for i, c := range t.Header {
		index[i] = -1
		for j, h := range found[0] {
			if h == c {
				index[i] = j
			}
		}
		if index[i] < 0 {
			return nil, fmt.Errorf("scale: the table %q has no column %q", first, c)
		}
	}
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
	return t, nil
}
