package benchdoc

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	simRun    = regexp.MustCompile(`^=== RUN   TestPacer_(?:unannounced|announced)/(.+)/(loopback|80_ms)$`)
	simResult = regexp.MustCompile(`^\s+pacer_test\.go:\d+: median ([\d.]+)x, worst ([\d.]+)x, ([\d.]+)% refused; ` +
		`target <= ([\d.]+)x, <= ([\d.]+)x, <= ([\d.]+)%(?:; held at <= ([\d.]+)x, <= ([\d.]+)x, <= ([\d.]+)%)?$`)
	simUnlimited = regexp.MustCompile(`^\s+pacer_test\.go:\d+: (loopback|80 ms): worst ([\d.]+)x the plan without a pacer$`)
	baselineHelp = regexp.MustCompile(`^\| today \| (\d+): .*\| (\d+): .*\|$`)
)

const simulationNote = "The list and 300 reads in virtual time against the least time each limit allows, bold past " +
	"the target; where missed, the `miss` map's hold. Beside them: the AWS SDKs' adaptive mode, and the Pacer told the " +
	"limit at its first refusal."

// simulationTables reads TestPacer_unannounced's and _announced's cells,
// each against its target (or what the miss map holds it to), beside the
// AWS adaptive baseline and the Pacer told its limit (PACE_BASELINE=1).
func simulationTables(r *Record) ([]*Table, error) {
	t, err := simulated(r.Lines)
	if err != nil {
		return nil, err
	}
	if err := besideBaseline(t, r.Lines); err != nil {
		return nil, err
	}
	for _, line := range r.Lines {
		if m := baselineHelp.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			t.Note += fmt.Sprintf(" Against the baseline, today's rules help %s cells and hurt %s.", m[1], m[2])
			break
		}
	}
	t.Note += " The same figures on any machine."
	u := &Table{ID: "unlimited", Title: "No limit met", Header: []string{"network", "worst"}, Keys: 1,
		Note: "`TestPacer_unlimited`: the worst of nine plans with no limit, against the same plans without a pacer: a start's cost. Target: 1.05x."}
	for _, line := range r.Lines {
		if m := simUnlimited.FindStringSubmatch(line); m != nil {
			u.Rows = append(u.Rows, []string{m[1], m[2] + "x"})
		}
	}
	if len(u.Rows) != 2 {
		return nil, fmt.Errorf("simulation: %d networks from TestPacer_unlimited, want 2", len(u.Rows))
	}
	return []*Table{t, u}, nil
}

// simulated is the table of the simulated cells, the baseline's columns
// empty.
func simulated(lines []string) (*Table, error) {
	t := &Table{ID: "simulation", Title: "Each simulated limiter, 40 plans a cell", Note: simulationNote,
		Header: []string{"limiter", "network", "median", "worst", "refused", "held at", "AWS baseline", "told at its first refusal"},
		Keys:   2}
	var name, network string
	var targets []string // median, worst, refused: each distinct one
	for _, line := range lines {
		if m := simRun.FindStringSubmatch(line); m != nil {
			name, network = strings.ReplaceAll(m[1], "_", " "), strings.ReplaceAll(m[2], "_", " ")
			continue
		}
		m := simResult.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("simulation: a result with no case before it: %q", line)
		}
		cells := []string{name, network, m[1] + "x", m[2] + "x", m[3] + "%", "-", "-", "-"}
		target := fmt.Sprintf("%sx, %sx, %s%%", m[4], m[5], m[6])
		if !slices.Contains(targets, target) {
			targets = append(targets, target)
		}
		over(cells, 2, m[1], m[4])
		over(cells, 3, m[2], m[5])
		over(cells, 4, m[3], m[6])
		if m[7] != "" {
			cells[5] = fmt.Sprintf("%sx, %sx, %s%%", m[7], m[8], m[9])
		}
		t.Rows = append(t.Rows, cells)
		name = ""
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("simulation: no TestPacer_unannounced or _announced results in the recording")
	}
	t.Note += " Targets (median, worst, refused): " + strings.Join(targets, "; ") + "."
	return t, nil
}

// besideBaseline fills t's baseline columns from PACE_BASELINE=1's tables:
// the AWS baseline's figures are the first column of the first table
// ("Added to the baseline"), and the Pacer told its limit has a table of
// its own, the last.
func besideBaseline(t *Table, lines []string) error {
	tables := splitTables(lines)
	if len(tables) != 5 {
		return fmt.Errorf("simulation: %d tables from PACE_BASELINE=1, want 5: did TestBaseline_rulesAgainstAWS and TestBaseline_told run?", len(tables))
	}
	row := map[string][]string{}
	for _, cells := range t.Rows {
		row[t.rowName(cells)] = cells
	}
	added, told := tables[0], tables[4]
	if added[0][1] != "baseline" || told[0][1] != "today" || told[0][2] != "told the limit" || told[0][4] != "told at its first refusal" {
		return fmt.Errorf("simulation: the baseline's tables are headed %q and %q", added[0], told[0])
	}
	for _, fill := range []struct {
		tab       [][]string
		col, into int
	}{{added, 1, 6}, {told, 4, 7}} {
		for _, cells := range fill.tab[2:] {
			target, ok := row[cells[0]]
			if !ok {
				return fmt.Errorf("simulation: the baseline's row %q has no simulated cell", cells[0])
			}
			target[fill.into] = cells[fill.col]
		}
	}
	return nil
}
