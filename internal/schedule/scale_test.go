package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/ratelimit"
)

// TestScale_takersThroughOneRedis measures the schedule's hot path at the
// scale of a large organisation's CI: K runs, each a Taker on a Redis
// client of its own, in one process as goroutines, against a real
// redis-server on loopback and 2 ms away, each with ten walkers that wait
// for a slot and then read (20 to 150 ms) as Terraform does, the fleet's
// gap 20 ms (50 a second), some 2,000 requests a fleet, sent to a limiter
// of 50 a second (burst 10) in the process. For each K it prints the
// slowest run against the ideal (the fleet's requests one gap apart from
// the first slot), the share the limiter refused, the round trips to Redis
// (the scripts it ran, by Redis's own count; takes and reads by the
// runs' count) and bytes (Redis's network counters) per request, Redis's
// CPU, how late each request went against its slot's time (90th
// percentile): the harness's crowding, not the schedule's; and the
// fleet's count of what the limiter accepted over the last second, as
// each run last heard it when a request went, against the harness's own
// count over the same tenths (median): the answers each run tells. With
// PACE_SCALE_RUNS, each figure is the median of the runs.
//
// The pace is set, not learnt: this is the cost of a take, the step every
// request of a fleet that shares its pace makes.
//
// A measurement, not a target: it runs only with PACE_SCALE=1 (K from
// PACE_SCALE_K, default 16,64,256), a minute a row and run.
func TestScale_takersThroughOneRedis(t *testing.T) {
	if os.Getenv("PACE_SCALE") == "" {
		t.Skip("PACE_SCALE=1 measures the schedule with K runs")
	}
	ks, runs := []int{16, 64, 256}, 1
	if v := os.Getenv("PACE_SCALE_K"); v != "" {
		ks = nil
		for f := range strings.SplitSeq(v, ",") {
			k, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
	}
	if v := os.Getenv("PACE_SCALE_RUNS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			runs = n
		}
	}
	var b strings.Builder
	b.WriteString("| K | Redis | slowest | refused | each run: slowest | round trips / request | of them: takes, reads | bytes / request | Redis CPU, one core | lateness (90th) | accepted as counted |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, oneWay := range []time.Duration{0, time.Millisecond} {
		for _, k := range ks {
			var all []takersFigures
			for range runs {
				d, _ := daemons.Redis(t, true)
				addr := d.Addr
				if oneWay > 0 {
					addr = daemons.Distant(t, d.Addr, oneWay)
				}
				all = append(all, takersFleet(t, k, d.Addr, addr, disturbance{}))
			}
			mid := func(f func(takersFigures) float64) float64 { return medianOf(all, f) }
			var each []string
			for _, r := range all {
				each = append(each, fmt.Sprintf("%.2fx", r.slowest))
			}
			where := map[bool]string{true: "loopback", false: "2 ms away"}[oneWay == 0]
			fmt.Fprintf(&b, "| %d | %s | %.2fx | %.1f%% | %s | %.2f | %.2f, %.2f | %.0f | %.1f%% | %s | %.0f%% |\n", k, where,
				mid(func(r takersFigures) float64 { return r.slowest }), mid(func(r takersFigures) float64 { return r.refused }), strings.Join(each, ", "),
				mid(func(r takersFigures) float64 { return r.trips }), mid(func(r takersFigures) float64 { return r.takes }),
				mid(func(r takersFigures) float64 { return r.reads }), mid(func(r takersFigures) float64 { return r.bytes }),
				mid(func(r takersFigures) float64 { return r.cpu }),
				time.Duration(mid(func(r takersFigures) float64 { return float64(r.late) })).Round(10*time.Microsecond),
				100*mid(func(r takersFigures) float64 { return r.counted }))
		}
	}
	t.Log("\n" + b.String())
}

type takersFigures struct {
	slowest, refused, trips, takes, reads, bytes, cpu float64
	counted                                           float64 // the fleet's count of the accepted over the truth
	late                                              time.Duration
	// With a disturbance: the slots runs that stopped held and never
	// sent, and the longest the fleet sent nothing after it.
	wasted  int64
	silence time.Duration
}

// disturbance is what happens to a fleet halfway through its ideal time.
type disturbance struct {
	// halve: the limit halves, and one run learns the gap it allows at
	// once (the pace's cut, in the schedule's terms).
	halve bool
	// stop: a tenth of the runs stop, holding whatever slots they took.
	stop bool
}

const (
	fleetGap     = 20 * time.Millisecond
	fleetWalkers = 10
	fleetTotal   = 2000
	fleetKey     = "test:{fleet}:schedule"
)

// takersFleet runs k Takers through the Redis at addr (admin: its own
// address, for INFO) and measures them.
func takersFleet(t *testing.T, k int, admin, addr string, d disturbance) takersFigures {
	adm := redis.NewClient(&redis.Options{Addr: admin, Protocol: 2})
	defer adm.Close()
	if _, err := NewRedis(adm, fleetKey, time.Hour).Step(context.Background(), Ask{Kind: Learn, Gap: fleetGap, Learnt: []byte("pace")}); err != nil {
		t.Fatal(err)
	}
	f := &fleet{limit: ratelimit.NewBucket(50, 10), ends: make([]time.Time, k), each: (fleetTotal + k - 1) / k}
	before := redisCounters(t, adm)
	start := time.Now()
	middle := time.Duration(f.each*k/2) * fleetGap
	stops := make([]context.CancelFunc, k)
	var wg sync.WaitGroup
	for m := range k {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 4})
		defer rdb.Close()
		c := &counted{Store: NewRedis(rdb, fleetKey, time.Hour)}
		f.stores = append(f.stores, c)
		var ctx context.Context
		ctx, stops[m] = context.WithCancel(context.Background())
		defer stops[m]()
		wg.Go(func() {
			f.run(ctx, t, m, NewTaker(c, wall{}, Config{Fresh: 30 * time.Millisecond, StepWait: 250 * time.Millisecond}))
		})
	}
	halved := make(chan int, 1) // the requests sent before the limit halved
	timer := time.AfterFunc(middle, func() {
		f.mu.Lock()
		halved <- len(f.sent)
		if d.halve {
			f.limit.SetRate(time.Now(), 25)
		}
		f.mu.Unlock()
		if d.halve {
			if _, err := NewRedis(adm, fleetKey, time.Hour).Step(context.Background(), Ask{Kind: Learn, Known: 1, Gap: 2 * fleetGap, Busy: -1, Learnt: []byte("halved")}); err != nil {
				t.Error(err)
			}
		}
		if d.stop {
			for _, stop := range stops[:k/10] {
				stop()
			}
		}
	})
	defer timer.Stop()
	wg.Wait()
	after := redisCounters(t, adm)
	return f.figures(before, after, time.Since(start), <-halved, d)
}

// fleet is a fleet's shared tally.
type fleet struct {
	limit  *ratelimit.Bucket
	stores []*counted
	each   int // requests a run

	mu       sync.Mutex
	refused  int
	sent     []time.Time // when each request went, in order
	accepted []time.Time // and each the limiter accepted
	// counted are the fleet's counts of the accepted over the last
	// second, as runs heard them, each over the harness's own.
	counted []float64
	lates   []time.Duration
	first   time.Time // the first slot due
	ends    []time.Time
}

// run is run m's walkers, each waiting on tk, until the run's requests
// are sent or ctx ends it.
func (f *fleet) run(ctx context.Context, t *testing.T, m int, tk *Taker) {
	left := make(chan struct{}, f.each)
	for range f.each {
		left <- struct{}{}
	}
	close(left)
	var done sync.WaitGroup
	for range fleetWalkers {
		done.Go(func() {
			for range left {
				s, err := tk.Wait(ctx)
				if err != nil {
					if ctx.Err() == nil {
						t.Error(err)
					}
					return
				}
				f.went(time.Now(), s, tk)
				select {
				case <-time.After(time.Duration(20+rand.IntN(131)) * time.Millisecond):
				case <-ctx.Done():
					return
				}
			}
		})
	}
	done.Wait()
	f.mu.Lock()
	f.ends[m] = time.Now()
	f.mu.Unlock()
}

// went counts a request sent at now in slot s, and tells tk the
// limiter's answer. It weighs the fleet's count of the accepted, as tk
// last heard it, against the harness's own over the same tenths.
func (f *fleet) went(now time.Time, s Slot, tk *Taker) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.limit.Take(now)
	tk.Heard(!ok)
	if !ok {
		f.refused++
	} else {
		f.accepted = append(f.accepted, now)
	}
	if w := tk.Last(); !f.first.IsZero() && time.UnixMicro(w.Now).Sub(f.first) > time.Second {
		from := time.UnixMicro((w.Now/Tenths - 9) * Tenths)
		lo, _ := slices.BinarySearchFunc(f.accepted, from, time.Time.Compare)
		hi, _ := slices.BinarySearchFunc(f.accepted, time.UnixMicro(w.Now), time.Time.Compare)
		if truth := hi - lo; truth > 0 {
			f.counted = append(f.counted, float64(w.Accepted)/float64(truth))
		}
	}
	f.sent = append(f.sent, now)
	f.lates = append(f.lates, now.Sub(s.Due))
	if f.first.IsZero() || s.Due.Before(f.first) {
		f.first = s.Due
	}
}

// figures are the fleet's, from Redis's counters before and after, the
// time it took and the requests sent before the middle.
func (f *fleet) figures(before, after map[string]float64, elapsed time.Duration, beforeMiddle int, d disturbance) takersFigures {
	n := float64(len(f.sent))
	// The ideal: the fleet's requests one gap apart from the first slot
	// (two after the middle when the limit halves there), the last one's
	// read (85 ms on average) after.
	ideal := time.Duration(n-1)*fleetGap + 85*time.Millisecond
	if d.halve {
		ideal += time.Duration(len(f.sent)-beforeMiddle) * fleetGap
	}
	slowest := slices.MaxFunc(f.ends, func(a, b time.Time) int { return a.Compare(b) })
	diff := func(name string) float64 { return after[name] - before[name] }
	r := takersFigures{
		slowest: float64(slowest.Sub(f.first)) / float64(ideal),
		refused: 100 * float64(f.refused) / n,
		trips:   (diff("calls_evalsha") + diff("calls_eval")) / n,
		takes:   float64(sum(f.stores, func(c *counted) int64 { return c.takes.Load() })) / n,
		reads:   float64(sum(f.stores, func(c *counted) int64 { return c.reads.Load() })) / n,
		bytes:   (diff("total_net_input_bytes") + diff("total_net_output_bytes")) / n,
		cpu:     100 * (diff("used_cpu_sys") + diff("used_cpu_user")) / elapsed.Seconds(),
		late:    percentile90(f.lates),
		counted: median(f.counted),
		wasted:  sum(f.stores, func(c *counted) int64 { return c.slots.Load() }) - int64(len(f.sent)),
	}
	for i := beforeMiddle + 1; i < len(f.sent); i++ {
		r.silence = max(r.silence, f.sent[i].Sub(f.sent[i-1]))
	}
	return r
}

// TestScale_takersDisturbed: 64 runs through Redis 2 ms away as
// TestScale_takersThroughOneRedis', steady; with the limit halved
// halfway through and one run learning the gap it allows at once; with a
// tenth of the runs stopped there, holding their slots; and both. For
// each: the slowest run against the ideal, the share refused (median, and
// each run's), the slots the stopped runs held and never sent, the
// longest the fleet sent nothing after the middle, and the round trips a
// request. PACE_SCALE=1 runs it, with PACE_SCALE_RUNS runs a row.
func TestScale_takersDisturbed(t *testing.T) {
	if os.Getenv("PACE_SCALE") == "" {
		t.Skip("PACE_SCALE=1 measures the schedule disturbed")
	}
	runs := 1
	if n, err := strconv.Atoi(os.Getenv("PACE_SCALE_RUNS")); err == nil && n > 0 {
		runs = n
	}
	var b strings.Builder
	b.WriteString("| K = 64, 2 ms away | slowest | refused | each run: refused | slots wasted | longest silence | round trips / request |\n|---|---|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		d    disturbance
	}{{"steady", disturbance{}}, {"limit halved", disturbance{halve: true}}, {"a tenth stopped", disturbance{stop: true}},
		{"both", disturbance{halve: true, stop: true}}} {
		var all []takersFigures
		var each []string
		for range runs {
			d, _ := daemons.Redis(t, true)
			r := takersFleet(t, 64, d.Addr, daemons.Distant(t, d.Addr, time.Millisecond), row.d)
			all = append(all, r)
			each = append(each, fmt.Sprintf("%.1f%%", r.refused))
		}
		fmt.Fprintf(&b, "| %s | %.2fx | %.1f%% | %s | %.0f | %s | %.2f |\n", row.name,
			medianOf(all, func(r takersFigures) float64 { return r.slowest }), medianOf(all, func(r takersFigures) float64 { return r.refused }),
			strings.Join(each, ", "), medianOf(all, func(r takersFigures) float64 { return float64(r.wasted) }),
			time.Duration(medianOf(all, func(r takersFigures) float64 { return float64(r.silence) })).Round(time.Millisecond),
			medianOf(all, func(r takersFigures) float64 { return r.trips }))
	}
	t.Log("\n" + b.String())
}

// medianOf is the median of f over the runs (the later of two middles).
func medianOf(all []takersFigures, f func(takersFigures) float64) float64 {
	xs := make([]float64, len(all))
	for i, r := range all {
		xs[i] = f(r)
	}
	return median(xs)
}

// counter is a number in INFO's text: a field's value, or a command's
// calls.
var counter = regexp.MustCompile(`(?m)^(?:cmdstat_(\w+):calls=|(\w+):)([0-9.]+)`)

// redisCounters are the counters of INFO that the figures use.
func redisCounters(t *testing.T, rdb *redis.Client) map[string]float64 {
	t.Helper()
	text, err := rdb.Info(context.Background(), "stats", "cpu", "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range counter.FindAllStringSubmatch(text, -1) {
		name := m[2]
		if m[1] != "" {
			name = "calls_" + m[1]
		}
		out[name], _ = strconv.ParseFloat(m[3], 64)
	}
	return out
}

// median is the later middle of xs; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Sorted(slices.Values(xs))[len(xs)/2]
}

func percentile90(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)*9/10]
}

func sum[T any](xs []T, f func(T) int64) int64 {
	var n int64
	for _, x := range xs {
		n += f(x)
	}
	return n
}
