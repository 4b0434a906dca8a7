package benchdoc

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	limitersTarget = regexp.MustCompile(`targets: median <= ([\d.]+)x, worst <= ([\d.]+)x, refused <= ([\d.]+)%(?:; learning within ([\d.]+)x of told)?`)
	limitersCell   = regexp.MustCompile(`^([\d.]+)x, worst ([\d.]+)x, ([\d.]+)%$`)
	limitersPlans  = regexp.MustCompile(`^\s+limiters_test\.go:\d+: .*, now, (\d+): `)
)

// limitersTables reads BenchmarkRealLimiters' table: this tree's provider
// (its "now" column) behind each real limiter and network and, where the
// run had one, beside the same provider told the limit ("told").
func limitersTables(r *Record) ([]*Table, error) {
	var target []string
	for _, line := range r.Lines {
		if m := limitersTarget.FindStringSubmatch(line); m != nil {
			target = m[1:]
		}
	}
	if target == nil {
		return nil, fmt.Errorf("limiters: no targets line: did BenchmarkRealLimiters end?")
	}
	plans := 0
	for _, line := range r.Lines {
		if m := limitersPlans.FindStringSubmatch(line); m != nil {
			plans, _ = strconv.Atoi(m[1]) // the regexp's digits
		}
	}
	found := lastTable(r.Lines, "limiter", "network")
	if found == nil {
		return nil, fmt.Errorf("limiters: no table of limiters")
	}
	now, told := -1, -1
	for i, h := range found[0] {
		switch h {
		case "now":
			now = i
		case "told":
			told = i
		}
	}
	if now < 0 {
		return nil, fmt.Errorf("limiters: the table has no column for this tree's provider (now): %q", found[0])
	}
	t := &Table{ID: "limiters", Title: "One plan through Terraform behind real nginx and HAProxy",
		Header: []string{"limiter", "network", "median", "worst", "refused"}, Keys: 2,
		Note: fmt.Sprintf("The list and 300 reads behind a real limiter of 50 a second, loopback or 80 ms away, "+
			"%d plans a row: median and worst against the ideal (the plan without the limit, or Terraform's "+
			"own time plus the least the limit allows), median refused. Targets: median <= %sx, worst <= %sx, "+
			"refused <= %s%%; bold past one.", plans, target[0], target[1], target[2])}
	if told >= 0 && target[3] == "" {
		return nil, fmt.Errorf("limiters: a told column, but no target for what learning costs")
	}
	if told >= 0 {
		t.Header = append(t.Header, "told", "learning costs")
		t.Note += fmt.Sprintf(" Told: given `requests_per_second = 50`; learning costs the medians' difference, bold past %sx.",
			target[3])
	}
	for _, row := range found[2:] {
		m := limitersCell.FindStringSubmatch(row[now])
		if m == nil {
			return nil, fmt.Errorf("limiters: the cell %q of %s, %s does not read", row[now], row[0], row[1])
		}
		cells := []string{row[0], strings.TrimSpace(row[1]), m[1] + "x", m[2] + "x", m[3] + "%"}
		over(cells, 2, m[1], target[0])
		over(cells, 3, m[2], target[1])
		over(cells, 4, m[3], target[2])
		if told >= 0 {
			k := limitersCell.FindStringSubmatch(row[told])
			if k == nil {
				return nil, fmt.Errorf("limiters: the cell %q of %s, %s does not read", row[told], row[0], row[1])
			}
			learnt, _ := strconv.ParseFloat(m[1], 64) // the regexps' digits
			given, _ := strconv.ParseFloat(k[1], 64)
			cost := fmt.Sprintf("%+.2f", learnt-given)
			cells = append(cells, k[1]+"x, "+k[3]+"%", cost+"x")
			over(cells, 6, cost, target[3])
		}
		t.Rows = append(t.Rows, cells)
	}
	return []*Table{t}, nil
}
