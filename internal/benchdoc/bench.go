package benchdoc

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	benchCheck  = regexp.MustCompile(`^  (\(\w+\) .+?)\s+\| (.+?)\s+\| (.+?)\s+\| (PASS|FAIL|OVER)$`)
	benchMedian = regexp.MustCompile(`^  (.+?):\s+median wall ([\d.]+)x ideal, ([\d.]+)% answered 429 \((core|more)\)$`)
	benchRound  = regexp.MustCompile(`^  (.+), \d+:\s+\d+ requests, \d+ answered 429 \([\d.]+%\), [\d.]+s, \d+ errors: wall ([\d.]+)x ideal`)
	benchPacing = regexp.MustCompile(`^  BenchmarkPacing/(\S+)-\d+\s+([\d.]+)% 429s, ([\d.]+)x ideal$`)
	benchFleet  = regexp.MustCompile(`^  (\S+)\s+([\d.]+)x ideal\s+([\d.]+)% refused\s+(\d+) plans failed\s+(PASS|OVER|FAIL)\s+\(span [\d.]+x\)\s+target .+$`)
	benchFleetR = regexp.MustCompile(`^\s*BenchmarkFleet/(\S+)-\d+\s`)
	benchRedis  = regexp.MustCompile(`^  one plan, Redis 20 ms\s+([\d.]+)x sharing locally\s+(PASS|OVER)$`)
	benchGo     = regexp.MustCompile(`^(Benchmark\S+)-\d+\s+\d+\s+(.+)$`)
)

// num writes a figure as bc may print it (".98") with its leading zero.
func num(s string) string {
	if strings.HasPrefix(s, ".") {
		return "0" + s
	}
	return s
}

// median and worst of figures, as written.
func medianWorst(fs []string) (string, string) {
	s := slices.Clone(fs)
	slices.SortFunc(s, func(a, b string) int {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return s[(len(s)-1)/2], s[len(s)-1]
}

// benchOutput is make bench's output, read line by line.
type benchOutput struct {
	summary, standin, fleets, goBench *Table
	// By limiter, case or fleet: each round's ratio to the ideal, and
	// share refused.
	rounds, pacing, pacingShares, fleetRuns map[string][]string
	// redis is one plan through a Redis 20 ms away against the same plan
	// sharing locally, and bench-fleet.sh's verdict on it.
	redis, redisVerdict string
}

const (
	benchNote = "Its own summary, medians of three rounds: (a) `terraform plan` of 100,000 profiles against one GET and a " +
		"generic decode; (b), (b2) the limiters; (d) a list past `max_response_megabytes`; (e) `filter` and `fields`; " +
		"(f) the fleets. FAIL fails the run."
	fleetsNote = "`BenchmarkFleet`: K plans of the list and 40 reads, one token, behind 50 a second (nginx, burst 10; " +
		"HAProxy; or a quota of 100 per 2 s, IETF's, GitHub's, to the millisecond, or `quota-opened`, each window opened by " +
		"a request), sharing one disk, `apart`, `redis`, or a state `aged` or `noise`; against every request at 50 a " +
		"second after Terraform's own time."
	standinNote = "(b): the list and 300 reads against the stand-in's limiters, loopback or 80 ms away: three plans " +
		"against the least time the limit allows after Terraform's own. Target: median %s, at most 3%% refused, on the core group."
	inProcessNote = "(b2) `BenchmarkPacing`: 300 reads as Terraform's walkers take them, no Terraform, three rounds; " +
		"`nginx_*` and `haproxy_*` through the real limiters. Same targets."
)

// dropNoneFailed drops the fleets' failed column when no plan failed, as
// the summary's (f) says then.
func dropNoneFailed(t *Table) {
	col := slices.Index(t.Header, "failed")
	for _, row := range t.Rows {
		if col < 0 || row[col] != "0" {
			return
		}
	}
	t.Header = slices.Delete(slices.Clone(t.Header), col, col+1)
	for i, row := range t.Rows {
		t.Rows[i] = slices.Delete(row, col, col+1)
	}
}

// readBench reads make bench's lines.
func readBench(lines []string) *benchOutput {
	o := &benchOutput{
		summary: &Table{ID: "bench", Title: "make bench's targets", Header: []string{"measure", "figure", "target", "verdict"}, Keys: 1, Note: benchNote},
		standin: &Table{ID: "standin", Title: "One plan through Terraform behind the stand-in's limiters",
			Header: []string{"limiter", "median", "worst", "refused", "group"}, Keys: 1},
		fleets: &Table{ID: "fleets", Title: "Many plans at once, one limit",
			Header: []string{"fleet", "median", "worst", "refused", "failed", "verdict"}, Keys: 1, Note: fleetsNote},
		goBench: &Table{ID: "go", Title: "Go benchmarks", Header: []string{"benchmark", "per op"}, Keys: 1,
			Note: "(c): list decoding, key encoding and the list's read, in process (`go test -bench`)."},
		rounds: map[string][]string{}, pacing: map[string][]string{},
		pacingShares: map[string][]string{}, fleetRuns: map[string][]string{},
	}
	for _, line := range lines {
		if m := benchCheck.FindStringSubmatch(line); m != nil {
			o.summary.Rows = append(o.summary.Rows, []string{m[1], num(m[2]), strings.TrimPrefix(m[3], "target "), m[4]})
		} else if m := benchMedian.FindStringSubmatch(line); m != nil {
			o.standin.Rows = append(o.standin.Rows, []string{m[1], num(m[2]) + "x", "", num(m[3]) + "%", m[4]})
		} else if m := benchRound.FindStringSubmatch(line); m != nil {
			o.rounds[m[1]] = append(o.rounds[m[1]], num(m[2]))
		} else if m := benchPacing.FindStringSubmatch(line); m != nil {
			o.pacing[m[1]] = append(o.pacing[m[1]], num(m[3]))
			o.pacingShares[m[1]] = append(o.pacingShares[m[1]], num(m[2]))
		} else if m := benchFleet.FindStringSubmatch(line); m != nil {
			o.fleets.Rows = append(o.fleets.Rows, []string{m[1], num(m[2]) + "x", "", num(m[3]) + "%", m[4], m[5]})
		} else if m := benchFleetR.FindStringSubmatch(line); m != nil {
			fields := strings.Fields(line)
			for i := 1; i < len(fields); i++ {
				if fields[i] == "x_ideal" {
					o.fleetRuns[m[1]] = append(o.fleetRuns[m[1]], num(fields[i-1]))
				}
			}
		} else if m := benchRedis.FindStringSubmatch(line); m != nil {
			o.redis, o.redisVerdict = num(m[1]), m[2]
		} else if m := benchGo.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], "BenchmarkPacing") && !strings.HasPrefix(m[1], "BenchmarkFleet") {
			o.goBench.Rows = append(o.goBench.Rows, []string{strings.TrimPrefix(m[1], "Benchmark"), strings.Join(strings.Fields(m[2]), " ")})
		}
	}
	return o
}

// benchTables reads make bench's output: its own summary of the targets
// it judges, each limiter's plans through Terraform, the same limiters in
// process, the fleets and the Go benchmarks.
func benchTables(r *Record) ([]*Table, error) {
	o := readBench(r.Lines)
	switch {
	case len(o.summary.Rows) == 0:
		return nil, fmt.Errorf("bench: no summary: did make bench end?")
	case len(o.standin.Rows) == 0 || len(o.pacing) == 0:
		return nil, fmt.Errorf("bench: no limiter's median from (b), or no BenchmarkPacing from (b2)")
	case len(o.fleets.Rows) == 0:
		return nil, fmt.Errorf("bench: no fleet's row from (f)")
	case len(o.goBench.Rows) == 0:
		return nil, fmt.Errorf("bench: no Go benchmark from (c)")
	}
	target := "?"
	for _, row := range o.summary.Rows {
		if row[0] == "(b) core, worst wall time" {
			target = row[2]
		}
	}
	o.standin.Note = fmt.Sprintf(standinNote, target)
	if err := worstOf(o.standin, o.rounds); err != nil {
		return nil, err
	}
	if err := worstOf(o.fleets, o.fleetRuns); err != nil {
		return nil, err
	}
	dropNoneFailed(o.fleets)
	if o.redis != "" {
		o.fleets.Note += fmt.Sprintf(" One plan sharing through a Redis 20 ms away took %sx the same plan sharing on its machine (%s against bench-fleet.sh's target).",
			o.redis, o.redisVerdict)
	}
	inProcess := &Table{ID: "in-process", Title: "The same limiters in process", Header: []string{"case", "median", "worst", "refused"}, Keys: 1,
		Note: inProcessNote}
	names := make([]string, 0, len(o.pacing))
	for name := range o.pacing {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		m, w := medianWorst(o.pacing[name])
		s, _ := medianWorst(o.pacingShares[name])
		inProcess.Rows = append(inProcess.Rows, []string{name, m + "x", w + "x", s + "%"})
	}
	return []*Table{o.summary, o.standin, inProcess, o.fleets, o.goBench}, nil
}

// worstOf fills each row's third cell with the worst of its runs.
func worstOf(t *Table, runs map[string][]string) error {
	for _, row := range t.Rows {
		if len(runs[row[0]]) == 0 {
			return fmt.Errorf("bench: %q has a median in %s but no runs", row[0], t.ID)
		}
		_, worst := medianWorst(runs[row[0]])
		row[2] = worst + "x"
	}
	return nil
}
