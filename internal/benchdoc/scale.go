package benchdoc

import (
	"fmt"
	"slices"
	"strings"
)

// scaleColumns are the columns of TestScale_membersThroughOneRedis' table
// behind a bucket that BENCHMARKS.md keeps: what a fleet took, how late
// the harness was, and what each request cost the store; quotaColumns are
// those of its table behind an announced quota. The first names the limit.
var (
	scaleColumns = []string{"K", "Redis", "slowest", "refused", "each run: slowest, lateness (90th)",
		"round trips / request", "busy steps", "bytes / request", "Redis CPU, one core"}
	quotaColumns = []string{"K, quota", "Redis", "slowest", "refused", "round trips / request", "busy steps",
		"bytes / request", "Redis CPU, one core"}
)

// scaleTables reads TestScale_membersThroughOneRedis' tables: the fleets
// behind a bucket, and behind a quota announced on every answer.
func scaleTables(r *Record) ([]*Table, error) {
	bucket, err := scaleTable(r, scaleColumns, "Redis", &Table{ID: "scale", Title: "K runs through one Redis", Keys: 2,
		Note: "K members in one process, each its own `paceredis.Store` and ten walkers, 2,000 reads a fleet, behind " +
			"50 a second (burst 10), through a real `redis-server`; slowest (against every read at 50 a second) and refused: " +
			"medians of three runs, less any 10 ms late at the 90th percentile."})
	if err != nil {
		return nil, err
	}
	quota, err := scaleTable(r, quotaColumns, "Redis", &Table{ID: "scale-quota", Title: "K runs through one Redis, a quota announced", Keys: 2,
		Note: "The same, behind a quota of 100 per 2 s announced GitHub's way, each window opened by a request."})
	if err != nil {
		return nil, err
	}
	return []*Table{bucket, quota}, nil
}

// scheduleColumns are the columns of TestScale_takersThroughOneRedis'
// table that BENCHMARKS.md keeps, and disturbedColumns of
// TestScale_takersDisturbed's.
var (
	scheduleColumns = []string{"K", "Redis", "slowest", "refused", "round trips / request",
		"bytes / request", "Redis CPU, one core", "lateness (90th)", "accepted as counted"}
	disturbedColumns = []string{"K = 64, 2 ms away", "slowest", "refused", "slots wasted", "longest silence"}
)

// scheduleTables reads the tables of TestScale_takers*: the schedule's
// take, which the pace does not use yet, at the same scale (2 ms away,
// and the largest fleet on loopback), then disturbed.
func scheduleTables(r *Record) ([]*Table, error) {
	steady, err := scaleTable(r, scheduleColumns, "Redis", &Table{ID: "schedule", Title: "K runs taking slots from one schedule in Redis", Keys: 2,
		Note: "As above, each member a `schedule.Taker` at a set 50 a second, telling the limiter's answers. Accepted as counted: " +
			"the fleet's count of the last second's, as a run heard it, over the harness's (answers count when told)."})
	if err != nil {
		return nil, err
	}
	steady.Rows = slices.DeleteFunc(steady.Rows, func(row []string) bool { return row[1] == "loopback" && row[0] != "256" })
	disturbed, err := scaleTable(r, disturbedColumns, "slowest", &Table{ID: "schedule-disturbed", Title: "The schedule disturbed", Keys: 1,
		Note: "Halfway, the limit halves and a member learns its gap, or a tenth of the members stop, or both."})
	if err != nil {
		return nil, err
	}
	return []*Table{steady, disturbed}, nil
}

// scaleTable reads the columns of the table whose first header cells are
// columns[0] and second into t, whose Keys say how many name a row.
func scaleTable(r *Record, columns []string, second string, t *Table) (*Table, error) {
	first := columns[0]
	found := lastTable(r.Lines, first, second)
	if found == nil {
		return nil, fmt.Errorf("scale: no table %q of fleets: did the test run with PACE_SCALE=1?", first)
	}
	t.Header = columns
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
