package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// The simulation in internal/pace (sim_test.go) is calibrated here: the
// plan it simulates, run in real time through the client, against the
// real limiters its rows are named for, on loopback and 80 ms away. Its
// figures go beside the simulation's own (pace's TestCalibration_virtual)
// in the body of a commit that changes either. A measurement, not a target: it runs only with
// PACE_CALIBRATE=1, some minutes.

// calibrationReads is the simulation's plan: one list read, then these
// reads, by ten walkers.
const calibrationReads = 300

// calibrationPlans is how many plans a row runs: five, or
// PACE_CALIBRATE_PLANS.
func calibrationPlans() int {
	if n, err := strconv.Atoi(os.Getenv("PACE_CALIBRATE_PLANS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// runPlan runs the simulation's plan through c, as Terraform takes it:
// the list, some 100 ms to expand the for_each, then the given number of
// reads taken by ten walkers, each pausing 20 to 150 ms between them. It
// returns the plan's time and its requests and refusals.
func runPlan(t *testing.T, c *Client, seed uint64, reads int) (time.Duration, int, int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var mu sync.Mutex
	pause := func(least, spread time.Duration) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return least + time.Duration(rng.Int64N(int64(spread)))
	}
	ctx, tally := WithTally(context.Background())
	start := time.Now()
	if _, err := c.ListProfiles(ctx); err != nil {
		t.Error(err) // not Fatal: a fleet's plans run on goroutines of their own
		return 0, 0, 0
	}
	time.Sleep(pause(80*time.Millisecond, 40*time.Millisecond)) // Terraform expanding the for_each
	var next, failed int
	var ended time.Time
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= reads {
					return
				}
				_, err := c.GetProfile(ctx, fmt.Sprintf("bp_gen_%07d", i))
				mu.Lock()
				ended = time.Now()
				if err != nil {
					failed++
				}
				mu.Unlock()
				time.Sleep(pause(20*time.Millisecond, 130*time.Millisecond))
			}
		})
	}
	wg.Wait()
	if failed > 0 {
		t.Errorf("%d reads failed", failed)
	}
	requests, refused, _ := tally.Counts()
	return ended.Sub(start), requests, refused
}

// TestCalibration_real prints, for each real limiter the simulation names
// a row for, on loopback and 80 ms away, the median and worst time of the
// simulation's plan against its ideal, and the median share refused, over
// calibrationPlans plans: the ideal is the plan's time with no limiter,
// or the least the limit allows, whichever is longer. PACE_CALIBRATE_ROWS
// runs only the limiters whose name holds it.
func TestCalibration_real(t *testing.T) {
	if os.Getenv("PACE_CALIBRATE") == "" {
		t.Skip("PACE_CALIBRATE=1 runs the simulation's plan through real limiters")
	}
	s := standin.New(standin.Options{Environments: []standin.Environment{{Name: "development", Token: testToken,
		Profiles: standin.Generate(calibrationReads)}}, PageSize: 1000})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	upstream := srv.Listener.Addr().String()
	perSecond := func(n int) time.Duration { return time.Duration(n) * time.Second / 50 }
	limiters := []struct {
		name  string
		start func() string
		least time.Duration
	}{
		{"none", func() string { return upstream }, 0},
		{"nginx limit_req, burst 10 (bucket burst 10, no Retry-After)", func() string {
			addr, _ := daemons.NginxLimit(t, upstream, true, "burst=10 nodelay", 0)
			return addr
		}, perSecond(calibrationReads + 1 - 10)},
		{"nginx limit_req, burst 20 (bucket 50, burst 20 queued)", func() string {
			addr, _ := daemons.NginxLimit(t, upstream, true, "burst=20", 0)
			return addr
		}, perSecond(calibrationReads)},
		{"nginx limit_req, no burst (bucket burst 1, no Retry-After)", func() string {
			addr, _ := daemons.NginxLimit(t, upstream, true, "", 0)
			return addr
		}, perSecond(calibrationReads)},
		{"HAProxy http_req_rate (HAProxy's rate, no Retry-After)", func() string {
			addr, _ := daemons.HAProxy(t, upstream, true)
			return addr
		}, perSecond(calibrationReads + 1)},
		{"HAProxy http_req_rate, hdr Retry-After 1 (HAProxy's rate, Retry-After: 1)", func() string {
			addr, _ := daemons.HAProxyLimit(t, upstream, true, 1)
			return addr
		}, perSecond(calibrationReads + 1)},
	}
	var b strings.Builder
	b.WriteString("| limiter | network | median | worst | refused |\n|---|---|---|---|---|\n")
	for _, network := range []struct {
		name   string
		oneWay time.Duration
	}{{"loopback", 0}, {"80 ms", 40 * time.Millisecond}} {
		free := map[uint64]time.Duration{}
		for _, l := range limiters {
			if l.least > 0 && !strings.Contains(l.name, os.Getenv("PACE_CALIBRATE_ROWS")) {
				continue
			}
			addr := l.start()
			if network.oneWay > 0 {
				addr = daemons.Distant(t, addr, network.oneWay)
			}
			var ratios, shares []float64
			for seed := range uint64(calibrationPlans()) {
				c := clientFor(t, "http://"+addr+"/development/api/v1", providerRetries)
				took, requests, refused := runPlan(t, c, seed, calibrationReads)
				if l.least == 0 {
					free[seed] = took
				}
				ratios = append(ratios, float64(took)/float64(max(free[seed], l.least)))
				shares = append(shares, 100*float64(refused)/float64(requests))
				time.Sleep(2500 * time.Millisecond) // the limiter's counters empty before the next plan
			}
			slices.Sort(ratios)
			slices.Sort(shares)
			fmt.Fprintf(&b, "| %s | %s | %.2fx | %.2fx | %.1f%% |\n", l.name, network.name,
				ratios[len(ratios)/2], ratios[len(ratios)-1], shares[len(shares)/2])
		}
	}
	t.Log("\n" + b.String())
}

// calibrationFleets and fleetReads are the simulation's fleets: five
// fleets a row, each plan its list and 40 reads (pace's runFleet).
const (
	calibrationFleets = 5
	fleetReads        = 40
)

// TestCalibration_realFleets prints, for the real limiters the
// simulation's fleets are named for, K = 8 and 16 plans at once sharing
// their pace on one disk and through one Redis, the median and worst
// fleet against the ideal (every request at 50 a second) and the median
// share refused. Each plan is a Client of its own, as each Terraform
// process has, started within 300 ms of the first as on the simulation's
// quiet machine; the fleet's time is its slowest plan's, each from its own
// start. Beside pace's TestCalibration_virtualFleets; PACE_CALIBRATE=1,
// and PACE_CALIBRATE_ROWS=HAProxy for the limiters whose name holds it.
func TestCalibration_realFleets(t *testing.T) {
	if os.Getenv("PACE_CALIBRATE") == "" {
		t.Skip("PACE_CALIBRATE=1 runs the simulation's fleets through real limiters")
	}
	s := standin.New(standin.Options{Environments: []standin.Environment{{Name: "development", Token: testToken,
		Profiles: standin.Generate(fleetReads)}}, PageSize: 1000})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	upstream := srv.Listener.Addr().String()
	redis, _ := daemons.Redis(t, true, "databases 64")
	limiters := []struct {
		name  string
		start func() string
	}{
		{"nginx", func() string {
			addr, _ := daemons.NginxLimit(t, upstream, true, "burst=10 nodelay", 0)
			return addr
		}},
		{"HAProxy", func() string {
			addr, _ := daemons.HAProxy(t, upstream, true)
			return addr
		}},
	}
	db := 0
	var b strings.Builder
	b.WriteString("| limiter | shared | K | median | worst | refused |\n|---|---|---|---|---|---|\n")
	for _, l := range limiters {
		if !strings.Contains(l.name, os.Getenv("PACE_CALIBRATE_ROWS")) {
			continue
		}
		addr := l.start()
		for _, store := range []string{"one disk", "Redis"} {
			for _, k := range []int{8, 16} {
				var ratios, shares []float64
				for seed := range uint64(calibrationFleets) {
					// A state of their own per fleet, a directory or a
					// database: one fleet does not start at the pace the
					// last one found, nor count its members.
					dir := t.TempDir()
					db++
					took, requests, refused := runFleet(t, k, seed, func() *Client {
						return clientFor(t, "http://"+addr+"/development/api/v1", providerRetries, func(c *Config) {
							c.SharePace = true
							if store == "Redis" {
								c.PaceStore = fmt.Sprintf("redis://%s/%d", redis.Addr, db)
							} else {
								c.PaceDir = dir
							}
						})
					})
					ideal := time.Duration(k*(fleetReads+1)) * time.Second / 50
					ratios = append(ratios, float64(took)/float64(ideal))
					shares = append(shares, 100*float64(refused)/float64(requests))
					t.Logf("%s, %s, K = %d, fleet %d: %.2fx, %.1f%% refused", l.name, store, k, seed, ratios[seed], shares[seed])
					time.Sleep(2500 * time.Millisecond) // the limiter's counters empty before the next fleet
				}
				slices.Sort(ratios)
				slices.Sort(shares)
				fmt.Fprintf(&b, "| %s | %s | %d | %.2fx | %.2fx | %.1f%% |\n", l.name, store, k,
					ratios[len(ratios)/2], ratios[len(ratios)-1], shares[len(shares)/2])
			}
		}
	}
	t.Log("\n" + b.String())
}

// runFleet runs k plans of fleetReads reads at once, each through a client
// newClient makes, started within 300 ms of the first. It returns the
// slowest plan's time, each from its own start, and the fleet's requests
// and refusals.
func runFleet(t *testing.T, k int, seed uint64, newClient func() *Client) (time.Duration, int, int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	clients := make([]*Client, k)
	delays := make([]time.Duration, k)
	for i := range clients {
		clients[i] = newClient()
		if i > 0 {
			delays[i] = time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
		}
	}
	var mu sync.Mutex
	var slowest time.Duration
	var requests, refused int
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			time.Sleep(delays[i])
			took, n, r := runPlan(t, c, seed*100+uint64(i), fleetReads)
			mu.Lock()
			defer mu.Unlock()
			slowest, requests, refused = max(slowest, took), requests+n, refused+r
		})
	}
	wg.Wait()
	return slowest, requests, refused
}
