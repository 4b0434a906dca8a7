package paceredis

import (
	"context"
	"errors"
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

// TestScale_membersThroughOneRedis measures the store at the scale of a
// large organisation's CI: K members, each a pace.Pacer sharing through a
// Store of its own (its own connections), in one process as goroutines
// (K processes would not fit on two cores), against a real redis-server
// on loopback and 2 ms away, each sending reads as Terraform does (ten
// walkers, 20 to 150 ms between reads) to one limiter of 50 a second
// (burst 10) in the process. Some 2,000 reads a fleet. For each K it
// prints the slowest and the median member against the ideal (every read
// at 50 a second), the share refused, the steps (scripts Redis ran) and
// the round trips the store's client sent (every command and pipeline,
// and each dial: heartbeats, liveness, joining and leaving included) per
// request, the steps by script, and those the store ended busy or away
// (pace.ErrBusy, pace.ErrAway, as the store returns them), the requests
// let go on a process's own copy and how many of them were refused,
// Redis's commands (those its scripts run included), bytes and CPU per
// request and the memory it holds, the CPU the fleet's own process kept
// busy, and how long a save's round trip and a refused step's turn took:
// where the fleet's process keeps its CPUs busy, its members wait for one,
// and the round trip grows past the network's. Each request's lateness is
// how late its walker asked against when it was due to (the end of its
// pause between reads): the harness's own crowding, which no design of
// the store causes. A run whose 90th percentile lateness is lateAside or
// more is set aside: shown, but not counted in the row's slowest, median
// and refused, which are the medians of the other runs.
//
// A second table runs the same fleets against a quota announced on every
// answer (100 each 2 s, each window opened by a request, GitHub's
// headers), whose count changes with every answer and so with every step.
//
// A measurement, not a target: it runs only with PACE_SCALE=1 (K from
// PACE_SCALE_K, default 16,64,256; only loopback or 2 ms with
// PACE_SCALE_NET=loopback or 2; PACE_SCALE_RUNS runs of each row, default
// 1; only the bucket or the quota with PACE_SCALE_LIMIT=bucket or quota),
// some minutes a run.
func TestScale_membersThroughOneRedis(t *testing.T) {
	if os.Getenv("PACE_SCALE") == "" {
		t.Skip("PACE_SCALE=1 measures the store with K members")
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
		fmt.Fprintf(&b, "| %s | Redis | slowest | median | refused | each run: slowest, lateness (90th) | steps / request | round trips / request | of them: saved, stale, liveness, heartbeats, dials | busy steps | away steps | let go unshared, refused of them | commands / request | bytes / request | Redis CPU / request | Redis CPU, one core | memory | fleet's CPU, cores | a save's round trip, a refused step's turn (median, 90th) |\n", lim.first)
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
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
				fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f, %.1f, %.1f, %.1f, %.1f | %.2f%% | %.2f%% | %.1f%%, %.1f%% | %.0f | %.0f | %.0f µs | %.0f%% | %.1f MB | %.2f of %d | %s |\n",
					k, network.name, r.slowest, r.median, r.refused, each, r.steps, r.trips, r.saved, r.stale, r.liveness, r.beats, r.dials, r.busy, r.away, r.unshared, r.unsharedRefused, r.commands, r.bytes, r.cpuPerRequest, r.cpuShare, r.memoryMB,
					r.cores, runtime.GOMAXPROCS(0), r.window)
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
	slowest, median, refused, steps, trips, busy, away, commands, bytes, cpuPerRequest, cpuShare, memoryMB float64
	// The steps per request by script: saves of the state, saves refused
	// as others saved since (each then tried again), liveness asked of
	// members (Gone), and heartbeats; and the dials.
	saved, stale, liveness, beats, dials float64
	// unshared is the share of requests let go on the process's own copy
	// of the model (a step busy or away), and unsharedRefused the share
	// of those refused.
	unshared, unsharedRefused float64
	// window is a save's round trip and a refused step's turn, as the
	// medians and 90th percentiles of scriptCounts'.
	window string
	// cores is the CPU the fleet's process kept busy: near all of them,
	// its steps queue for a CPU between loading the state and saving it,
	// and more of them find it saved since, which a fleet of machines
	// would not.
	cores float64
	// late is the 90th percentile of the requests' lateness.
	late time.Duration
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
	var requests, refused, unshared, unsharedRefused atomic.Int64
	var ended stepCounts
	var lateMu sync.Mutex
	var lates []time.Duration
	tooks := make([]time.Duration, k)
	// Each process derives the state's name (NameIterations of PBKDF2) on
	// a CPU of its own: here the K derivations would crowd two cores for
	// seconds as the fleet starts, so they are done before it does.
	stores := make([]*Store, k)
	var scripts scriptCounts
	for m := range stores {
		s, err := Open(raw, nil, pace.StateFormat, base, token)
		if err != nil {
			t.Fatal(err)
		}
		s.rdb.AddHook(&storeHook{scriptCounts: &scripts})
		stores[m] = s
	}
	start, cpuStart := time.Now(), busyCPU()
	var wg sync.WaitGroup
	for m := range k {
		wg.Go(func() {
			s := stores[m]
			defer s.Close()
			p := pace.New(pace.RealClock{}, 8, 0, 30*time.Second)
			p.Share(countingStore{Store: s, counts: &ended})
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
							if !tk.Shared() {
								unshared.Add(1)
								if !ok {
									unsharedRefused.Add(1)
								}
							}
							p.Done(tk, pace.Answer{Refused: !ok, Quota: h})
							p.Release(tk)
							p.Events()
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
	steps := after["cmdstat_evalsha"] - before["cmdstat_evalsha"]
	cpu := after["used_cpu_sys"] + after["used_cpu_user"] - before["used_cpu_sys"] - before["used_cpu_user"]
	ideal := time.Duration(float64(k*reads) / 50 * float64(time.Second))
	return fleetFigures{
		slowest:         float64(slices.Max(tooks)) / float64(ideal),
		median:          float64(median(tooks)) / float64(ideal),
		refused:         100 * float64(refused.Load()) / n,
		steps:           steps / n,
		trips:           float64(scripts.trips.Load()) / n,
		busy:            100 * float64(ended.busy.Load()) / max(float64(ended.steps.Load()), 1),
		away:            100 * float64(ended.away.Load()) / max(float64(ended.steps.Load()), 1),
		commands:        (after["total_commands_processed"] - before["total_commands_processed"]) / n,
		bytes:           (after["total_net_input_bytes"] + after["total_net_output_bytes"] - before["total_net_input_bytes"] - before["total_net_output_bytes"]) / n,
		cpuPerRequest:   cpu / n * 1e6,
		cpuShare:        100 * cpu / wall.Seconds(),
		memoryMB:        after["used_memory"] / (1 << 20),
		cores:           cpuUsed / wall.Seconds(),
		saved:           float64(scripts.saved.Load()) / n,
		stale:           float64(scripts.stale.Load()) / n,
		liveness:        float64(scripts.liveness.Load()) / n,
		beats:           float64(scripts.beats.Load()) / n,
		dials:           float64(scripts.dials.Load()) / n,
		unshared:        100 * float64(unshared.Load()) / n,
		unsharedRefused: 100 * float64(unsharedRefused.Load()) / max(float64(unshared.Load()), 1),
		window:          fmt.Sprintf("%s, %s", spread(scripts.saveTrips), spread(scripts.turns)),
		late:            percentile(lates, 0.9),
	}
}

// stepCounts are a fleet's steps as its stores ended them.
type stepCounts struct{ steps, busy, away atomic.Int64 }

// countingStore is a member's Store as its Pacer shares it, counting each
// step by the error the store ended it with: pace.ErrBusy (its saves
// refused, as others saved first, for all of StepWait) and pace.ErrAway.
type countingStore struct {
	*Store
	counts *stepCounts
}

func (c countingStore) Update(ctx context.Context, f func([]byte) ([]byte, error)) error {
	return c.count(c.Store.Update(ctx, f))
}

func (c countingStore) UpdateInPlace(ctx context.Context, f func([]byte) ([]byte, bool, error)) error {
	return c.count(c.Store.UpdateInPlace(ctx, f))
}

func (c countingStore) count(err error) error {
	c.counts.steps.Add(1)
	switch {
	case errors.Is(err, pace.ErrBusy):
		c.counts.busy.Add(1)
	case errors.Is(err, pace.ErrAway):
		c.counts.away.Add(1)
	}
	return err
}

// percentile is ds' p-th quantile (0 for none).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// spread is the median and 90th percentile of ds, to the microsecond.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Sorted(slices.Values(ds))
	return fmt.Sprintf("%s (%s)", s[len(s)/2].Round(time.Microsecond), s[len(s)*9/10].Round(time.Microsecond))
}

// scriptCounts counts a fleet's scripts as its stores run them, and
// every round trip their clients send: a redis.Hook.
type scriptCounts struct {
	saved, stale, liveness, beats, dials, trips atomic.Int64
	// A save's round trip, and a refused step's turn: the time from a
	// save refused after one that landed to the next try, which waits for
	// nothing but the step run again on the state saved since (a member
	// with a CPU of its own does it in microseconds); not a slight one's,
	// after which no try follows, nor one whose step, run again, turned
	// slight and ended (the next try is another step's).
	mu               sync.Mutex
	saveTrips, turns []time.Duration
}

// storeHook counts one store's scripts into the fleet's. Its own fields
// need no lock: a store runs one save at a time, under its own.
type storeHook struct {
	*scriptCounts
	staleAt  time.Time       // when a save came back refused after one that landed, until the next try
	staleFor context.Context // and the step's: a try of another step is no turn
	inRow    int             // its saves refused in a row
}

func (c *storeHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.dials.Add(1)
		c.trips.Add(1)
		return next(ctx, network, addr)
	}
}

func (c *storeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.trips.Add(1)
		return next(ctx, cmds)
	}
}

func (c *storeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.trips.Add(1)
		began := time.Now()
		err := next(ctx, cmd)
		args := cmd.Args()
		if err != nil || len(args) < 2 || !strings.EqualFold(cmd.Name(), "evalsha") {
			return err
		}
		switch args[1] {
		case saveIf.Hash():
			var res []any
			if rc, ok := cmd.(*redis.Cmd); ok {
				res, _ = rc.Slice()
			}
			c.mu.Lock()
			c.saveTrips = append(c.saveTrips, time.Since(began))
			if !c.staleAt.IsZero() && ctx == c.staleFor {
				c.turns = append(c.turns, began.Sub(c.staleAt))
			}
			c.mu.Unlock()
			c.staleAt, c.staleFor = time.Time{}, nil
			switch {
			case len(res) > 0 && res[0] == int64(1):
				c.saved.Add(1)
				c.inRow = 0
			case args[len(args)-1] == "1":
				// A slight step refused ends there, keeping the state
				// it found: no try follows.
				c.stale.Add(1)
			default:
				c.stale.Add(1)
				if c.inRow++; c.inRow == 1 {
					c.staleAt, c.staleFor = time.Now(), ctx
				}
			}
		case silentIn.Hash():
			c.liveness.Add(1)
		case beat.Hash():
			c.beats.Add(1)
		}
		return err
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
