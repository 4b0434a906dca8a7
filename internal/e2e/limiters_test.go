package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// planReads is a limited plan's reads beside its list, as in make bench.
const planReads = 300

// The pace model's targets for one plan behind a real limiter, printed
// with BenchmarkRealLimiters' table: its median and worst plan against
// the ideal, and its median share refused, in percent.
const (
	limiterMedian  = 1.15
	limiterWorst   = 1.25
	limiterRefused = 3.0
	// Learning a limit costs at most this much of the median beside the
	// same plan told it (requests_per_second = 50), refusing at most
	// limiterRefused or no more than the told plan.
	limiterLearning = 0.05
)

// BenchmarkRealLimiters is one plan of the list and 300 reads through
// Terraform behind the real limiters the pace model is judged against, 50
// a second: nginx's limit_req with a burst of 10 (nodelay), a burst of 20
// queued, and none; HAProxy's http_req_rate, which counts refusals. Each
// runs on loopback and behind a real 80 ms round trip (daemons.Distant),
// sending no Retry-After as both do by default, and 80 ms away also
// sending Retry-After: 1 with every refusal. Every plan starts with no
// pace saved, as in CI.
//
// A row's figures are the median and worst plan against its ideal and the
// median share refused over BENCH_ROUNDS plans (5). The ideal is the plan
// without a limit on the same network, or Terraform's own time outside
// the requests plus the least the limit allows, whichever is longer.
// BENCH_LIMITERS, a regular expression, picks the rows whose "limiter,
// network" it matches (default: all): a row's tail wants ten plans or
// more. BENCH_LOGS names a directory that keeps each plan's provider log
// at debug, to read where a slow plan's time went.
// Each plan is run a second time by the same provider told the limit
// (requests_per_second = 50, its ceiling), the "told" column, for what
// learning the limit costs against the same ideal.
// BENCH_BEFORE names a directory holding another build of the provider
// (scripts/bench-limiters.sh builds one from a commit): each plan is then
// run by it too, just before, for the two side by side in one run.
func BenchmarkRealLimiters(b *testing.B) {
	if os.Getenv("TF_ACC") == "" {
		b.Skip("set TF_ACC=1 to run plans through the CLI")
	}
	// free names the provider whose plans without a limit give the ideal.
	type provider struct{ name, dir, free, setting string }
	providers := []provider{{"now", pluginDir, "now", ""}, {"told", pluginDir, "now", "requests_per_second = 50"}}
	if dir := os.Getenv("BENCH_BEFORE"); dir != "" {
		providers = append([]provider{{"before", dir, "before", ""}}, providers...)
	}
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	rows, err := regexp.Compile(os.Getenv("BENCH_LIMITERS"))
	if err != nil {
		b.Fatalf("BENCH_LIMITERS: %v", err)
	}
	s := standin.New(standin.Options{Environments: []standin.Environment{{Name: "production", Token: fleetToken,
		Profiles: standin.Generate(planReads)}}})
	srv, spanned := timedServer(s)
	b.Cleanup(srv.Close)
	upstream := srv.Listener.Addr().String()
	logs, logName := os.Getenv("BENCH_LOGS"), strings.NewReplacer(" ", "_", ",", "", ":", "", "/", "_")
	if logs != "" {
		if err := os.MkdirAll(logs, 0o755); err != nil {
			b.Fatalf("BENCH_LOGS: %v", err)
		}
	}
	// plan runs one plan, named name, through addr with the provider p:
	// its time and the span of its requests at the service.
	plan := func(p provider, addr, name string) (took, span time.Duration) {
		w := workspaceWith(b, p.dir, fleetPlan("http://"+addr+"/production/api/v1", b.TempDir(), 0, planReads, p.setting))
		var env []string
		if logs != "" {
			env = []string{"TF_LOG_PROVIDER=debug", "TF_LOG_PATH=" + filepath.Join(logs, logName.Replace(name)+".log")}
		}
		spanned()
		began := time.Now()
		out, err := w.run(env, "plan", "-input=false", "-no-color", "-refresh=false")
		took = time.Since(began)
		if err != nil || !strings.Contains(out, fmt.Sprintf("read = %d", planReads)) {
			b.Fatalf("the plan did not read its %d profiles: %v\n%s", planReads, err, out)
		}
		return took, spanned()
	}
	perSecond := func(n int) time.Duration { return time.Duration(n) * time.Second / 50 }
	limiters := []struct {
		name  string
		start func(retryAfter int) (string, func() []string)
		least time.Duration // the least the limit allows the list and the reads
	}{
		{"nginx limit_req, burst 10", func(ra int) (string, func() []string) {
			return daemons.NginxLimit(b, upstream, true, "burst=10 nodelay", ra)
		}, perSecond(planReads + 1 - 10)},
		{"nginx limit_req, burst 20, queued", func(ra int) (string, func() []string) {
			return daemons.NginxLimit(b, upstream, true, "burst=20", ra)
		}, perSecond(planReads)},
		{"nginx limit_req, no burst", func(ra int) (string, func() []string) {
			return daemons.NginxLimit(b, upstream, true, "", ra)
		}, perSecond(planReads)},
		{"HAProxy http_req_rate", func(ra int) (string, func() []string) {
			return daemons.HAProxyLimit(b, upstream, true, ra)
		}, perSecond(planReads + 1)},
	}
	columns := []struct {
		name       string
		oneWay     time.Duration
		retryAfter int
	}{{"loopback", 0, 0}, {"80 ms, Retry-After: 1", 40 * time.Millisecond, 1}, {"80 ms, no Retry-After", 40 * time.Millisecond, 0}}

	// Without a limit, per network and provider: the plan's time, and
	// Terraform's own outside the requests (the mean of two plans).
	type free struct{ took, own time.Duration }
	frees := map[string]free{}
	for _, oneWay := range []time.Duration{0, 40 * time.Millisecond} {
		addr := upstream
		if oneWay > 0 {
			addr = daemons.Distant(b, upstream, oneWay)
		}
		for _, p := range providers {
			if p.free != p.name {
				continue
			}
			var f free
			for i := range 2 {
				took, span := plan(p, addr, fmt.Sprintf("%s, no limit, %v, %d", p.name, oneWay, i+1))
				f.took, f.own = f.took+took/2, f.own+(took-span)/2
			}
			frees[fmt.Sprint(p.name, oneWay)] = f
			b.Logf("%s, no limit, one way %v: %.2fs, of which %.2fs outside the requests", p.name, oneWay, f.took.Seconds(), f.own.Seconds())
		}
	}

	var table strings.Builder
	table.WriteString("| limiter | network |")
	for _, p := range providers {
		fmt.Fprintf(&table, " %s |", p.name)
	}
	table.WriteString("\n|---|---|" + strings.Repeat("---|", len(providers)) + "\n")
	for _, l := range limiters {
		for _, c := range columns {
			if !rows.MatchString(l.name + ", " + c.name) {
				continue
			}
			addr, statuses := l.start(c.retryAfter)
			if c.oneWay > 0 {
				addr = daemons.Distant(b, addr, c.oneWay)
			}
			ratios, shares := map[string][]float64{}, map[string][]float64{}
			for r := range rounds {
				for _, p := range providers {
					seen := len(statuses())
					took, _ := plan(p, addr, fmt.Sprintf("%s, %s, %s, %d", l.name, c.name, p.name, r+1))
					// The limiter's counters empty, and its log is written,
					// before the next plan.
					time.Sleep(1500 * time.Millisecond)
					answers := statuses()[seen:]
					f := frees[fmt.Sprint(p.free, c.oneWay)]
					ideal := max(f.took, f.own+l.least)
					ratios[p.name] = append(ratios[p.name], took.Seconds()/ideal.Seconds())
					shares[p.name] = append(shares[p.name], 100*float64(daemons.Refusals(answers))/float64(max(len(answers), 1)))
					b.Logf("%s, %s, %s, %d: %.2fs, %.2fx, %d requests, %d refused", l.name, c.name, p.name, r+1,
						took.Seconds(), ratios[p.name][r], len(answers), daemons.Refusals(answers))
				}
			}
			fmt.Fprintf(&table, "| %s | %s |", l.name, c.name)
			for _, p := range providers {
				rs, ss := ratios[p.name], shares[p.name]
				slices.Sort(rs)
				slices.Sort(ss)
				fmt.Fprintf(&table, " %.2fx, worst %.2fx, %.1f%% |", rs[len(rs)/2], rs[len(rs)-1], ss[len(ss)/2])
			}
			table.WriteString("\n")
		}
	}
	b.Logf("targets: median <= %.2fx, worst <= %.2fx, refused <= %.0f%%; learning within %.2fx of told\n%s",
		limiterMedian, limiterWorst, limiterRefused, limiterLearning, table.String())
}
