package pace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/schedule"
)

// TestFleetTrace prints one shared fleet of runSharedFleet's, with the
// requests of plan PLAN and the events of every plan (ALL=1), and each
// refusal with the arrivals before it: PACE_FLEET_TRACE=1 CASE=HAProxy
// K=8 SEED=0 PLAN=0. A tool for the fleet's tuning, not a test.
func TestFleetTrace(t *testing.T) {
	if os.Getenv("PACE_FLEET_TRACE") == "" {
		t.Skip("PACE_FLEET_TRACE=1 traces one shared fleet")
	}
	seed, _ := strconv.Atoi(os.Getenv("SEED"))
	k, _ := strconv.Atoi(os.Getenv("K"))
	for _, c := range fleetCases {
		if c.name == os.Getenv("CASE") {
			pl, _ := strconv.Atoi(os.Getenv("PLAN"))
			r, s := debugFleet(t, pl, uint64(seed), k, c.new(), quiet)
			fmt.Printf("ratio %.3f refused %.2f\n", r, s)
		}
	}
}

func debugFleet(t *testing.T, plan int, seed uint64, k int, lim limiter, m machine) (ratio, refused float64) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(seed, 1))
		random := func(d time.Duration) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			if d <= 0 {
				return 0
			}
			return time.Duration(rng.Int64N(int64(d)))
		}
		oneWay := func() time.Duration { return m.net.rtt/2 + random(m.net.jitter) }
		clock := shifted(time.Until(time.Unix(1_800_000_000, 0)))
		store := schedule.NewMemory(clock.Now)
		var arrivals []time.Time
		t0 := clock.Now()
		t0real := time.Now()
		plans := make([]simPlan, k)
		var fleet sync.WaitGroup
		for i := range plans {
			launch := time.Duration(0)
			if i > 0 {
				launch = random(m.launch)
			}
			p := defaultPacer(clock)
			if os.Getenv("APART") == "" {
				p.Share(store)
			}
			fleet.Go(func() {
				time.Sleep(launch)
				began := time.Now()
				var evs []string
				var requests, refusals atomic.Int64
				read := func() {
					for {
						tk, err := p.Wait(bg)
						if err != nil {
							t.Errorf("plan %d: %v", i, err)
							return
						}
						requests.Add(1)
						time.Sleep(oneWay())
						mu.Lock()
						ok, wait, quota := lim.admit(clock.Now())
						arrivals = append(arrivals, clock.Now())
						if !ok {
							n1, n2 := 0, 0
							for _, a := range arrivals {
								if clock.Now().Sub(a) <= time.Second {
									n1++
								}
								if clock.Now().Sub(a) <= 200*time.Millisecond {
									n2++
								}
							}
							fmt.Printf("refusal at %v: %d arrivals in the last second, %d in 200ms\n", clock.Now().Sub(t0).Milliseconds(), n1, n2)
						}
						mu.Unlock()
						if ok && m.net.work > 0 {
							time.Sleep(random(m.net.work))
						}
						if ok {
							mu.Lock()
							lim.finish(clock.Now())
							mu.Unlock()
						}
						time.Sleep(oneWay())
						p.Done(tk, Answer{Refused: !ok, RetryAfter: wait, Quota: quota})
						if os.Getenv("ALL") != "" && i != plan {
							for _, e := range p.Events() {
								if !strings.Contains(e.Message, "another run") {
									fmt.Println("ALL", i, time.Since(t0real).Milliseconds(), "sent", tk.sent.Sub(clock.Now()).Milliseconds(), e.Message, e.Fields)
								}
							}
						}
						if i == plan {
							mu.Lock()
							p.mu.Lock()
							if p.fleet == nil {
								evs = append(evs, fmt.Sprint(time.Since(began).Milliseconds(), "ms ok=", ok, " pace=", int(p.pace.Limit()), " ", tk.waited, " grown=", p.grown, " ph=", p.phase))
							} else {
								evs = append(evs, fmt.Sprint(time.Since(began).Milliseconds(), "ms ok=", ok, " sent=", tk.sent.Sub(clock.Now()).Milliseconds(), " cut=", tk.cut, "/", p.cut, " pace=", int(p.pace.Limit()), " ", tk.waited, " grown=", p.grown, " base=", p.fleet.base, " busy=", p.fleet.taker.Last().Busy, " synced=", p.synced(), " v=", p.fleet.taker.Last().Version, " gapus=", p.fleet.taker.Last().Gap, " ph=", p.phase))
							}
							p.mu.Unlock()
							for _, e := range p.Events() {
								evs = append(evs, fmt.Sprint(time.Since(began).Milliseconds(), "ms ", e.Message, e.Fields))
							}
							mu.Unlock()
						}
						p.Release(tk)
						if ok {
							return
						}
						refusals.Add(1)
						time.Sleep(wait) // the client's retry (simulateFleet)
					}
				}
				read() // the list
				time.Sleep(80*time.Millisecond + random(40*time.Millisecond))
				var next atomic.Int64
				var walkers sync.WaitGroup
				for range 10 {
					walkers.Go(func() {
						for next.Add(1) <= int64(fleetReads) {
							read()
							time.Sleep(20*time.Millisecond + random(130*time.Millisecond))
						}
					})
				}
				walkers.Wait()
				plans[i] = simPlan{took: time.Since(began), requests: int(requests.Load()), refused: int(refusals.Load())}
				fmt.Printf("plan %d took %v, %d requests, %d refused\n", i, time.Since(began), requests.Load(), refusals.Load())
				if i == plan {
					for _, e := range evs {
						fmt.Println("   ", e)
					}
				}
			})
		}
		fleet.Wait()
		time.Sleep(time.Second) // the answers told late, their reads ended
		ratio, refused = fleetTook(plans)
	})
	return ratio, refused
}
