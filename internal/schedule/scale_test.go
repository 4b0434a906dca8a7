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
// CPU, and how late each request went against its slot's time (90th
// percentile): the harness's crowding, not the schedule's. With
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
	b.WriteString("| K | Redis | slowest | refused | each run: slowest | round trips / request | of them: takes, reads | bytes / request | Redis CPU, one core | lateness (90th) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, oneWay := range []time.Duration{0, time.Millisecond} {
		for _, k := range ks {
			var all []takersFigures
			for range runs {
				d, _ := daemons.Redis(t, true)
				addr := d.Addr
				if oneWay > 0 {
					addr = daemons.Distant(t, d.Addr, oneWay)
				}
				all = append(all, takersFleet(t, k, d.Addr, addr))
			}
			mid := func(f func(takersFigures) float64) float64 {
				xs := make([]float64, len(all))
				for i, r := range all {
					xs[i] = f(r)
				}
				slices.Sort(xs)
				return xs[len(xs)/2]
			}
			var each []string
			for _, r := range all {
				each = append(each, fmt.Sprintf("%.2fx", r.slowest))
			}
			where := map[bool]string{true: "loopback", false: "2 ms away"}[oneWay == 0]
			fmt.Fprintf(&b, "| %d | %s | %.2fx | %.1f%% | %s | %.2f | %.2f, %.2f | %.0f | %.1f%% | %s |\n", k, where,
				mid(func(r takersFigures) float64 { return r.slowest }), mid(func(r takersFigures) float64 { return r.refused }), strings.Join(each, ", "),
				mid(func(r takersFigures) float64 { return r.trips }), mid(func(r takersFigures) float64 { return r.takes }),
				mid(func(r takersFigures) float64 { return r.reads }), mid(func(r takersFigures) float64 { return r.bytes }),
				mid(func(r takersFigures) float64 { return r.cpu }),
				time.Duration(mid(func(r takersFigures) float64 { return float64(r.late) })).Round(10*time.Microsecond))
		}
	}
	t.Log("\n" + b.String())
}

type takersFigures struct {
	slowest, refused, trips, takes, reads, bytes, cpu float64
	late                                              time.Duration
}

// takersFleet runs k Takers through the Redis at addr (admin: its own
// address, for INFO) and measures them.
func takersFleet(t *testing.T, k int, admin, addr string) takersFigures {
	const (
		gap     = 20 * time.Millisecond
		walkers = 10
		total   = 2000
	)
	ctx := context.Background()
	adm := redis.NewClient(&redis.Options{Addr: admin, Protocol: 2})
	defer adm.Close()
	key := "test:{fleet}:schedule"
	if _, err := NewRedis(adm, key, time.Hour).Learn(ctx, 0, gap, 0, []byte("pace")); err != nil {
		t.Fatal(err)
	}
	each := (total + k - 1) / k
	before := redisCounters(t, adm)
	var mu sync.Mutex
	var lates []time.Duration
	limit, refused := ratelimit.NewBucket(50, 10), 0
	var first time.Time
	ends := make([]time.Time, k)
	var stores []*counted
	var wg sync.WaitGroup
	start := time.Now()
	for m := range k {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 4})
		defer rdb.Close()
		c := &counted{Store: NewRedis(rdb, key, time.Hour)}
		stores = append(stores, c)
		tk := NewTaker(c, wall{}, 30*time.Millisecond, 250*time.Millisecond, nil, nil)
		left := make(chan struct{}, each)
		for range each {
			left <- struct{}{}
		}
		close(left)
		var done sync.WaitGroup
		for range walkers {
			done.Go(func() {
				for range left {
					s, err := tk.Wait(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					now := time.Now()
					mu.Lock()
					if _, ok := limit.Take(now); !ok {
						refused++
					}
					lates = append(lates, now.Sub(s.Due))
					if first.IsZero() || s.Due.Before(first) {
						first = s.Due
					}
					mu.Unlock()
					time.Sleep(time.Duration(20+rand.IntN(131)) * time.Millisecond)
				}
			})
		}
		wg.Go(func() {
			done.Wait()
			ends[m] = time.Now()
		})
	}
	wg.Wait()
	after := redisCounters(t, adm)
	elapsed := time.Since(start)
	n := float64(each * k)
	// The ideal: the fleet's requests one gap apart from the first slot,
	// the last one's read (85 ms on average) after.
	ideal := time.Duration(n-1)*gap + 85*time.Millisecond
	slowest := slices.MaxFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	diff := func(name string) float64 { return after[name] - before[name] }
	return takersFigures{
		slowest: float64(slowest.Sub(first)) / float64(ideal),
		refused: 100 * float64(refused) / n,
		trips:   (diff("calls_evalsha") + diff("calls_eval")) / n,
		takes:   float64(sum(stores, func(c *counted) int64 { return c.takes.Load() })) / n,
		reads:   float64(sum(stores, func(c *counted) int64 { return c.reads.Load() })) / n,
		bytes:   (diff("total_net_input_bytes") + diff("total_net_output_bytes")) / n,
		cpu:     100 * (diff("used_cpu_sys") + diff("used_cpu_user")) / elapsed.Seconds(),
		late:    percentile90(lates),
	}
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
