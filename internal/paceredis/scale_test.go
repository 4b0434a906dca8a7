package paceredis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/ratelimit"
)

// TestScale_pacersThroughOneRedis measures the shared pace at the scale
// of a large organisation's CI: K runs, each a pace.Pacer sharing the
// fleet's schedule through a Store of its own (its own connections), in
// one process as goroutines (K processes would not fit on two cores),
// against a real redis-server on loopback and 2 ms away, each sending
// reads as Terraform does (ten walkers, 20 to 150 ms between reads) to one
// limit in the process: a bucket of 50 a second (burst 10), or a quota
// announced on every answer (100 each 2 s, each window opened by a
// request, GitHub's headers). Some 2,000 reads a fleet. For each K it
// prints the slowest and the median run against the ideal (every read at
// 50 a second), the share refused, the round trips the stores' clients
// sent per request (every command and each dial), and of them the
// schedule's takes, reads and learns, Redis's commands, bytes and CPU per
// request, and the CPU the fleet's own process kept busy. Each request's
// lateness is how late its walker asked against when it was due to (the
// end of its pause between reads): the harness's own crowding, which no
// design of the store causes. A run whose 90th percentile lateness is
// lateAside or more is set aside: shown, but not counted in the row's
// slowest, median and refused, which are the medians of the other runs.
//
// A measurement, not a target: it runs only with PACE_SCALE=1 (K from
// PACE_SCALE_K, default 16,64,256; only loopback or 2 ms with
// PACE_SCALE_NET=loopback or 2; PACE_SCALE_RUNS runs of each row, default
// 1; only the bucket or the quota with PACE_SCALE_LIMIT=bucket or quota),
// some minutes a run.
func TestScale_pacersThroughOneRedis(t *testing.T) {
	if os.Getenv("PACE_SCALE") == "" {
		t.Skip("PACE_SCALE=1 measures the shared pace with K runs")
	}
	ks := []int{16, 64, 256}
	if v := os.Getenv("PACE_SCALE_K"); v != "" {
		ks = nil
		for _, f := range strings.Split(v, ",") {
			k, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
	}
	runs := 1
	if v := os.Getenv("PACE_SCALE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PACE_SCALE_RUNS=%q: want a count of runs", v)
		}
		runs = n
	}
	for _, lim := range scaleLimits {
		if w := os.Getenv("PACE_SCALE_LIMIT"); w != "" && w != lim.name {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "| %s | Redis | slowest | median | refused | each run: slowest, lateness (90th) | round trips / request | of them: takes, reads, learns | commands / request | bytes / request | Redis CPU, one core | fleet's CPU, cores | away / 100 requests |\n", lim.first)
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, network := range []struct {
			name   string
			oneWay time.Duration
		}{{"loopback", 0}, {"2 ms away", time.Millisecond}} {
			if w := os.Getenv("PACE_SCALE_NET"); w != "" && !strings.HasPrefix(network.name, w) {
				continue
			}
			for _, k := range ks {
				var all []fleetFigures
				for range runs {
					d, _ := daemons.Redis(t, true)
					addr := d.Addr
					if network.oneWay > 0 {
						addr = daemons.Distant(t, addr, network.oneWay)
					}
					all = append(all, runFleet(t, k, "redis://"+addr, d.Addr, lim.new))
				}
				r, each := medians(all)
				fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %.2f | %.2f, %.2f, %.3f | %.1f | %.0f | %.0f%% | %.2f of %d | %.2f |\n",
					k, network.name, r.slowest, r.median, r.refused, each, r.trips, r.takes, r.reads, r.learns, r.commands, r.bytes, r.cpuShare,
					r.cores, runtime.GOMAXPROCS(0), r.away)
			}
		}
		t.Log("\n" + b.String())
	}
}

// lateAside is the 90th percentile lateness at which a run is set aside:
// the harness, not the store, made it slow.
const lateAside = 10 * time.Millisecond

// scaleLimits are the limits the fleets meet, each a table: its first
// header cell, and a new limit for each fleet.
var scaleLimits = []struct {
	name, first string
	new         func() scaleLimit
}{
	{"bucket", "K", func() scaleLimit { return &bucketLimit{b: ratelimit.NewBucket(50, 10)} }},
	{"quota", "K, quota", func() scaleLimit {
		return &quotaLimit{q: ratelimit.Quota{Limit: 100, Window: 2 * time.Second, Opened: true}}
	}},
}

// scaleLimit is the service the fleet reads from: it takes a request at
// now, and returns whether it was accepted and the headers of its answer.
type scaleLimit interface {
	take(now time.Time) (ok bool, h http.Header)
}

type bucketLimit struct {
	mu sync.Mutex
	b  *ratelimit.Bucket
}

func (l *bucketLimit) take(now time.Time) (bool, http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.b.Take(now)
	return ok, nil
}

type quotaLimit struct{ q ratelimit.Quota }

func (l *quotaLimit) take(now time.Time) (bool, http.Header) {
	remaining, reset := l.q.Take(now)
	h := http.Header{}
	l.q.Announce(h, "github", now, remaining, reset)
	return remaining >= 0, h
}

// medians are the row's figures of a row's runs: the figures of the last
// run counted, with the slowest, median and refused the medians of the
// runs not set aside (all of them, and a note, when every run was), and
// each run's slowest and lateness.
func medians(all []fleetFigures) (row fleetRow, each string) {
	var counted []fleetFigures
	var runs []string
	for _, f := range all {
		aside := ""
		if f.late >= lateAside {
			aside = ", set aside"
		} else {
			counted = append(counted, f)
		}
		runs = append(runs, fmt.Sprintf("%.2fx (%s%s)", f.slowest, f.late.Round(100*time.Microsecond), aside))
	}
	note := ""
	if len(counted) == 0 {
		counted, note = all, " (every run set aside)"
	}
	mid := func(v func(fleetFigures) float64) float64 {
		s := make([]float64, len(counted))
		for i, f := range counted {
			s[i] = v(f)
		}
		slices.Sort(s)
		return s[len(s)/2]
	}
	row = fleetRow{
		fleetFigures: counted[len(counted)-1],
		slowest:      fmt.Sprintf("%.2fx%s", mid(func(f fleetFigures) float64 { return f.slowest }), note),
		median:       fmt.Sprintf("%.2fx", mid(func(f fleetFigures) float64 { return f.median })),
		refused:      fmt.Sprintf("%.1f%%", mid(func(f fleetFigures) float64 { return f.refused })),
	}
	return row, strings.Join(runs, ", ")
}

// fleetRow is a row of the table: the medians of its runs, and the last
// counted run's other figures.
type fleetRow struct {
	fleetFigures
	slowest, median, refused string
}

// fleetFigures are one fleet's.
type fleetFigures struct {
	slowest, median, refused, trips, commands, bytes, cpuShare float64
	// The schedule's steps per request, by kind.
	takes, reads, learns float64
	// cores is the CPU the fleet's process kept busy.
	cores float64
	// late is the 90th percentile of the requests' lateness.
	late time.Duration
	// away is how often a run found its store away, per 100 requests: a
	// step that failed, or did not answer within pace.StepWait.
	away float64
}

// busyCPU is the CPU time this process has used, as the Go runtime
// estimates it.
func busyCPU() float64 {
	m := []metrics.Sample{{Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/cpu/classes/idle:cpu-seconds"}}
	metrics.Read(m)
	return m[0].Value.Float64() - m[1].Value.Float64()
}

// runFleet runs k members through the Redis at raw (admin: its own
// address, for INFO) against a limit newLimit makes, and returns the
// fleet's figures.
func runFleet(t *testing.T, k int, raw, admin string, newLimit func() scaleLimit) fleetFigures {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: admin, Protocol: 2})
	defer rdb.Close()
	before := info(t, rdb)
	reads := max(4, 2000/k)
	lim := newLimit()
	var requests, refused, away atomic.Int64
	var lateMu sync.Mutex
	var lates []time.Duration
	tooks := make([]time.Duration, k)
	// Each process derives the schedule's name (NameIterations of PBKDF2)
	// on a CPU of its own: here the K derivations would crowd two cores
	// for seconds as the fleet starts, so they are done before it does.
	stores := make([]*Store, k)
	var trips tripCounts
	for m := range stores {
		s, err := Open(raw, nil, pace.StateFormat, base, token)
		if err != nil {
			t.Fatal(err)
		}
		s.rdb.AddHook(&trips)
		stores[m] = s
	}
	start, cpuStart := time.Now(), busyCPU()
	var wg sync.WaitGroup
	for m := range k {
		wg.Go(func() {
			s := stores[m]
			defer s.Close()
			p := pace.New(pace.RealClock{}, 8, 0, 30*time.Second)
			p.Share(s)
			rng := rand.New(rand.NewPCG(uint64(m), 1))
			var rngMu sync.Mutex
			var next atomic.Int64
			began := time.Now()
			var walkers sync.WaitGroup
			for range 10 {
				walkers.Go(func() {
					for next.Add(1) <= int64(reads) {
						for {
							tk, err := p.Wait(context.Background())
							if err != nil {
								t.Error(err)
								return
							}
							ok, h := lim.take(time.Now())
							requests.Add(1)
							if !ok {
								refused.Add(1)
							}
							p.Done(tk, pace.Answer{Refused: !ok, Quota: h})
							p.Release(tk)
							for _, e := range p.Events() {
								if strings.Contains(e.Message, "store is away") {
									away.Add(1)
								}
							}
							if ok {
								break
							}
						}
						rngMu.Lock()
						pause := 20*time.Millisecond + time.Duration(rng.Int64N(int64(130*time.Millisecond)))
						rngMu.Unlock()
						due := time.Now().Add(pause)
						time.Sleep(pause) // Terraform's walker between reads
						late := time.Since(due)
						lateMu.Lock()
						lates = append(lates, late)
						lateMu.Unlock()
					}
				})
			}
			walkers.Wait()
			tooks[m] = time.Since(began)
		})
	}
	wg.Wait()
	wall, cpuUsed := time.Since(start), busyCPU()-cpuStart
	after := info(t, rdb)
	n := float64(requests.Load())
	cpu := after["used_cpu_sys"] + after["used_cpu_user"] - before["used_cpu_sys"] - before["used_cpu_user"]
	ideal := time.Duration(float64(k*reads) / 50 * float64(time.Second))
	return fleetFigures{
		slowest:  float64(slices.Max(tooks)) / float64(ideal),
		median:   float64(median(tooks)) / float64(ideal),
		refused:  100 * float64(refused.Load()) / n,
		trips:    float64(trips.trips.Load()) / n,
		takes:    float64(trips.takes.Load()) / n,
		reads:    float64(trips.reads.Load()) / n,
		learns:   float64(trips.learns.Load()) / n,
		commands: (after["total_commands_processed"] - before["total_commands_processed"]) / n,
		bytes:    (after["total_net_input_bytes"] + after["total_net_output_bytes"] - before["total_net_input_bytes"] - before["total_net_output_bytes"]) / n,
		cpuShare: 100 * cpu / wall.Seconds(),
		cores:    cpuUsed / wall.Seconds(),
		late:     percentile(lates, 0.9),
		away:     100 * float64(away.Load()) / n,
	}
}

// percentile is ds' p-th quantile (0 for none).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// tripCounts counts every round trip a fleet's stores' clients send, and
// the schedule's steps by kind: a redis.Hook.
type tripCounts struct{ trips, takes, reads, learns atomic.Int64 }

func (c *tripCounts) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.trips.Add(1)
		return next(ctx, network, addr)
	}
}

func (c *tripCounts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.trips.Add(1)
		return next(ctx, cmds)
	}
}

func (c *tripCounts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.trips.Add(1)
		// EVALSHA sha 1 key kind ...: the step's kind.
		if args := cmd.Args(); len(args) > 4 && strings.EqualFold(cmd.Name(), "evalsha") {
			switch args[4] {
			case "take":
				c.takes.Add(1)
			case "read":
				c.reads.Add(1)
			case "learn":
				c.learns.Add(1)
			}
		}
		return next(ctx, cmd)
	}
}

// info is Redis's INFO as numbers: each field, and each command's calls
// as cmdstat_<name>.
func info(t *testing.T, rdb *redis.Client) map[string]float64 {
	t.Helper()
	text, err := rdb.Info(context.Background(), "stats", "cpu", "memory", "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for line := range strings.Lines(text) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		if strings.HasPrefix(name, "cmdstat_") {
			calls, _, _ := strings.Cut(strings.TrimPrefix(value, "calls="), ",")
			value = calls
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// median is the middle of ds (the later of the two middles).
func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}
