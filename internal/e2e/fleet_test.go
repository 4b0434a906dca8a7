package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceredis"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceshare"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// fleetToken is the fleet's one token, for the one limit they share.
const fleetToken = "bp_fleet_7Hq2LmX9pR4t"

// TestE2E_plansAtOnceShareOneLimit: plans started together on one machine,
// each its own provider process with the same token, behind one limit of
// 50 requests a second (the stand-in's bucket, or a real nginx's
// limit_req, which sends no Retry-After), pace as one: none fails, and
// few of their requests are refused.
func TestE2E_plansAtOnceShareOneLimit(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run the end-to-end tests")
	}
	// Not in parallel with other tests: the machine's load would show as
	// refusals. A hundred reads a plan: the start's refusals, which come
	// before the pace is found however long the plans, are not the most
	// of them (with 40 they were 3% to 11%).
	const plans, reads = 4, 100
	for name, front := range map[string]func(t *testing.T, upstream string) (string, func() (requests, refused int)){
		"the stand-in's bucket": nil,
		"nginx limit_req": func(t *testing.T, upstream string) (string, func() (int, int)) {
			addr, statuses := daemons.Nginx(t, upstream, true)
			return addr, func() (int, int) { all := statuses(); return len(all), daemons.Refusals(all) }
		},
	} {
		t.Run(name, func(t *testing.T) {
			opts := standin.Options{Environments: []standin.Environment{{Name: "production", Token: fleetToken, Profiles: standin.Generate(plans * reads)}}}
			if front == nil {
				opts.RateLimit, opts.RateBurst = 50, 10
			}
			s := standin.New(opts)
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			addr, counts := srv.Listener.Addr().String(), func() (int, int) { return int(s.Requests.Load()), int(s.Limited.Load()) }
			if front != nil {
				addr, counts = front(t, addr)
			}
			paceDir := t.TempDir()
			ws := make([]*workspace, plans)
			for i := range ws {
				ws[i] = newWorkspace(t, fleetPlan("http://"+addr+"/production/api/v1", paceDir, i*reads, reads))
			}
			for i, err := range startPlans(ws, make([][]string, plans), reads)() {
				if err != nil {
					t.Errorf("plan %d: %v", i, err)
				}
			}
			requests, refused := counts()
			t.Logf("%d of %d requests refused", refused, requests)
			// The ideal sends 4 x 101 requests, none refused; a start that
			// overshoots the limit and the probes that find it cost a few.
			if requests < plans*(reads+1) || refused > requests/10 {
				t.Errorf("%d of %d requests refused: want at most a tenth", refused, requests)
			}
		})
	}
}

// TestE2E_plansOnMachinesOfTheirOwnShareOneRedis: plans with nothing on
// disk in common (each its own home, cache, temporary folder and pace
// directory, as on machines of their own), each its own provider process
// with the same token, behind one real nginx (limit_req, 50 a second, no
// Retry-After), pace as one through one Redis with a user and password:
// none fails, few requests are refused, and the password is in no log at
// TF_LOG=trace. With Redis stopped while they run, none fails either.
func TestE2E_plansOnMachinesOfTheirOwnShareOneRedis(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run the end-to-end tests")
	}
	const plans, reads, password = 4, 100, "zq9-redis-Pa55"
	for _, stopped := range []bool{false, true} {
		t.Run(map[bool]string{false: "Redis up", true: "Redis stopped while they run"}[stopped], func(t *testing.T) {
			s := standin.New(standin.Options{Environments: []standin.Environment{{Name: "production", Token: fleetToken, Profiles: standin.Generate(plans * reads)}}})
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			addr, statuses := daemons.Nginx(t, srv.Listener.Addr().String(), true)
			redisd, stop := daemons.Redis(t, true, "user default off", "user fleet on >"+password+" ~browserprofile:pace:* "+paceredis.ACL,
				"user admin on >admin ~* +@all")
			store := "redis://fleet:" + password + "@" + redisd.Addr
			ws, envs, logs := make([]*workspace, plans), make([][]string, plans), make([]string, plans)
			for i := range ws {
				env, home := apart(t)
				logs[i] = filepath.Join(home, "terraform.log")
				envs[i] = append(env, "BROWSERPROFILE_PACE_STORE="+store, "TF_LOG=trace", "TF_LOG_PATH="+logs[i])
				ws[i] = newWorkspace(t, fleetPlan("http://"+addr+"/production/api/v1", filepath.Join(home, "pace"), i*reads, reads))
			}
			wait := startPlans(ws, envs, reads)
			if stopped {
				for deadline := time.Now().Add(time.Minute); s.Requests.Load() < plans*reads/4 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond) // the fleet's progress, watched: no bound on anything
				}
				stop()
			}
			for i, err := range wait() {
				if err != nil {
					t.Errorf("plan %d: %v", i, err)
				}
			}
			all := daemons.AtLeast(statuses, plans*(reads+1))
			requests, refused := len(all), daemons.Refusals(all)
			t.Logf("%d of %d requests refused", refused, requests)
			if !stopped && (requests < plans*(reads+1) || refused > requests/10) {
				t.Errorf("%d of %d requests refused: want at most a tenth", refused, requests)
			}
			if stopped && refused > requests/3 {
				// Each plan paces alone once Redis is gone, as plans
				// sharing nothing do: never faster than its own refusals
				// allow.
				t.Errorf("%d of %d requests refused with Redis stopped: want at most a third", refused, requests)
			}
			away := 0
			for _, name := range logs {
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(b), password) || strings.Contains(string(b), fleetToken) {
					t.Errorf("%s holds the Redis password or the token", name)
				}
				if strings.Contains(string(b), "not shared with other runs") {
					t.Errorf("%s: a plan did not share its pace", name)
				}
				if strings.Contains(string(b), pace.ErrAway.Error()) {
					away++
				}
			}
			if stopped && away == 0 {
				t.Errorf("no plan found Redis away")
			}
			if !stopped {
				rdb := redis.NewClient(&redis.Options{Addr: redisd.Addr, Username: "admin", Password: "admin", Protocol: 2})
				defer rdb.Close()
				if keys, err := rdb.Keys(context.Background(), "browserprofile:pace:*").Result(); err != nil || len(keys) != 3 {
					t.Errorf("keys in Redis %v (%v): want the fleet's one state, its version and its members", keys, err)
				}
			}
		})
	}
}

// startPlans starts a plan in every workspace at once, each with its
// environment; what it returns waits for them all, and gives each plan's
// error: its own, or that it did not read reads profiles.
func startPlans(ws []*workspace, envs [][]string, reads int) (wait func() []error) {
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := w.run(envs[i], "plan", "-input=false", "-no-color", "-refresh=false")
			if err == nil && !strings.Contains(out, fmt.Sprintf("read = %d", reads)) {
				err = fmt.Errorf("the plan did not read its %d profiles", reads)
			}
			if err != nil {
				err = fmt.Errorf("%w\n%s", err, out)
			}
			errs[i] = err
		}()
	}
	return func() []error { wg.Wait(); return errs }
}

// apart is the environment of a plan with nothing on disk in common with
// the others, as on a machine of its own: a home (returned), a cache and a
// temporary folder of its own.
func apart(tb testing.TB) (env []string, home string) {
	home = tb.TempDir()
	return []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "TMPDIR=" + tb.TempDir()}, home
}

// fleetPlan is one plan of the fleet: the list and reads profiles of its
// own from the first'th, pacing through paceDir; settings are more lines
// of the provider block.
func fleetPlan(base, paceDir string, first, reads int, settings ...string) string {
	return fmt.Sprintf(`
provider "browserprofile" {
  base_url  = %q
  api_token = %q
  pace_dir  = %q
  %s
}

data "browserprofile_profiles" "all" {}

data "browserprofile_profile" "each" {
  for_each    = toset([for i in range(%d, %d) : format("bp_gen_%%07d", i)])
  profile_key = each.key
}

output "read" { value = "read = ${length(data.browserprofile_profile.each)}" }
`, base, fleetToken, paceDir, strings.Join(settings, "\n  "), first, first+reads)
}

// BenchmarkFleet is make bench's (f): K plans at once on this machine,
// each the list and fleetReads profiles of its own through its own
// provider process, one token, behind one limit of 50 requests a second: a
// real nginx (limit_req, burst 10) and HAProxy (a rate over any second,
// refusals counted), neither sending Retry-After, and the stand-in
// announcing a quota of 100 every 2 s. Plans share their pace through one
// directory, or, "apart", each has its own, as on machines of their own.
// Each row reports the fleet's time (from the launch to the last plan's
// end) against the ideal, every request at 50 a second after Terraform's
// own time (the same fleet's, without a limit, less its requests' span),
// the share of requests refused, and the plans that failed; and the span
// of its requests at the service, from the first to reach it to the last,
// against every request at 50 a second (x_span), which leaves out
// Terraform's own time.
func BenchmarkFleet(b *testing.B) {
	if os.Getenv("TF_ACC") == "" {
		b.Skip("set TF_ACC=1 to run the fleet through the CLI")
	}
	fixed := map[int]time.Duration{}
	for _, row := range fleetRows() {
		b.Run(row.name, func(b *testing.B) {
			if _, ok := fixed[row.k]; !ok {
				fixed[row.k] = fleetOwnTime(b, row.k)
			}
			for range b.N {
				r := runFleetOnce(b, row, true)
				ideal := fixed[row.k] + time.Duration(row.k*(fleetReads+1))*time.Second/50
				b.ReportMetric(r.took.Seconds()/ideal.Seconds(), "x_ideal")
				b.ReportMetric(r.span.Seconds()/(float64(row.k*(fleetReads+1))/50), "x_span")
				b.ReportMetric(100*float64(r.refused)/float64(max(r.requests, 1)), "%refused")
				b.ReportMetric(float64(r.failed), "failed")
			}
		})
	}
}

// fleetReads is each plan's reads beside its list.
const fleetReads = 40

// fleetRow is one row of BenchmarkFleet.
type fleetRow struct {
	name    string
	k       int
	limiter string        // nginx, haproxy, quota (IETF's headers), quota-github, quota-opened (GitHub's windows), quota-precise, or none
	apart   bool          // nothing on disk in common: each plan its own home, cache, temporary and pace directories
	redis   bool          // the plans share their pace in one Redis
	away    time.Duration // and Redis is this far away, a round trip
	seed    string        // the state the plans find: "aged" (two days untouched), "noise" (overwritten), or none
}

func fleetRows() []fleetRow {
	var rows []fleetRow
	for _, lim := range []string{"nginx", "haproxy", "quota"} {
		for _, k := range []int{4, 8, 16} {
			rows = append(rows, fleetRow{name: fmt.Sprintf("%s/K=%d", lim, k), k: k, limiter: lim})
		}
		rows = append(rows, fleetRow{name: lim + "/K=8/apart", k: 8, limiter: lim, apart: true})
	}
	for _, lim := range []string{"nginx", "haproxy"} {
		for _, k := range []int{8, 16} {
			rows = append(rows, fleetRow{name: fmt.Sprintf("%s/K=%d/redis", lim, k), k: k, limiter: lim, apart: true, redis: true})
		}
	}
	for _, lim := range []string{"quota", "quota-github", "quota-opened", "quota-precise"} {
		for _, k := range []int{8, 16} {
			if lim != "quota" {
				rows = append(rows, fleetRow{name: fmt.Sprintf("%s/K=%d", lim, k), k: k, limiter: lim})
			}
			if lim != "quota" || k != 8 {
				rows = append(rows, fleetRow{name: fmt.Sprintf("%s/K=%d/apart", lim, k), k: k, limiter: lim, apart: true})
			}
		}
	}
	for _, seed := range []string{"aged", "noise"} {
		rows = append(rows, fleetRow{name: "nginx/K=8/" + seed, k: 8, limiter: "nginx", seed: seed})
	}
	// One plan sharing through a Redis 20 ms away, against the same plan
	// sharing on this machine.
	rows = append(rows, fleetRow{name: "nginx/K=1", k: 1, limiter: "nginx"},
		fleetRow{name: "nginx/K=1/redis-20ms", k: 1, limiter: "nginx", apart: true, redis: true, away: 20 * time.Millisecond})
	return rows
}

// seedState leaves in dir the state the fleet's plans will share: one a
// run saved two days ago after its pace was cut, untouched since ("aged"),
// or that state overwritten with noise ("noise").
func seedState(b *testing.B, dir, base, seed string) {
	u, err := client.ParseBaseURL(base)
	if err != nil {
		b.Fatal(err)
	}
	store, err := paceshare.Open(dir, pace.StateFormat, u.String(), fleetToken)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	clock := shiftedClock(-48 * time.Hour)
	p := pace.New(clock, 8, 0, time.Minute)
	p.Share(store)
	for i := range 20 {
		t, err := p.Wait(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		p.Done(t, pace.Answer{Refused: i%3 == 2})
		p.Release(t)
	}
	states, _ := filepath.Glob(filepath.Join(dir, "*.state"))
	if len(states) != 1 {
		b.Fatalf("%d states seeded", len(states))
	}
	if seed == "noise" {
		noise := make([]byte, 400)
		_, _ = rand.Read(noise)
		if err := os.WriteFile(states[0], noise, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(states[0], old, old); err != nil {
		b.Fatal(err)
	}
}

// shiftedClock is the wall clock, moved by its offset.
type shiftedClock time.Duration

func (c shiftedClock) Now() time.Time                       { return time.Now().Add(time.Duration(c)) }
func (shiftedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// fleetRun is one fleet's outcome.
type fleetRun struct {
	took, span                time.Duration
	requests, refused, failed int
}

// fleetOwnTime is Terraform's own time in a fleet of k plans: the fleet's,
// without a limit, less the span of its requests (the mean of two).
func fleetOwnTime(b *testing.B, k int) time.Duration {
	var own time.Duration
	for range 2 {
		r := runFleetOnce(b, fleetRow{k: k, limiter: "none"}, false)
		if r.failed > 0 {
			b.Fatalf("%d of %d plans failed without a limit", r.failed, k)
		}
		own += (r.took - r.span) / 2
	}
	b.Logf("K=%d: Terraform's own time %.2fs", k, own.Seconds())
	return own
}

// runFleetOnce runs row's fleet once: its time, its requests (as the
// limiter in front counted them) and the plans that failed.
func runFleetOnce(b *testing.B, row fleetRow, timed bool) fleetRun {
	opts := standin.Options{Environments: []standin.Environment{{Name: "production", Token: fleetToken, Profiles: standin.Generate(row.k * fleetReads)}}}
	if family, ok := map[string]string{"quota": "ietf", "quota-github": "github", "quota-opened": "github", "quota-precise": "discord"}[row.limiter]; ok {
		opts.Quota, opts.QuotaWindow, opts.Announce = 100, 2*time.Second, family
		opts.QuotaOpened = row.limiter == "quota-opened"
	}
	s := standin.New(opts)
	srv, spanned := timedServer(s)
	defer srv.Close()
	addr, counts := srv.Listener.Addr().String(), func() (int, int) { return int(s.Requests.Load()), int(s.Limited.Load()) }
	switch row.limiter {
	case "nginx", "haproxy":
		start := daemons.Nginx
		if row.limiter == "haproxy" {
			start = daemons.HAProxy
		}
		var statuses func() []string
		addr, statuses = start(b, addr, true)
		counts = func() (int, int) { all := statuses(); return len(all), daemons.Refusals(all) }
	}
	shared := b.TempDir()
	base := "http://" + addr + "/production/api/v1"
	if row.seed != "" {
		seedState(b, shared, base, row.seed)
	}
	var env []string
	if row.redis {
		redisd, _ := daemons.Redis(b, true)
		addr := redisd.Addr
		if row.away > 0 {
			addr = daemons.Distant(b, addr, row.away/2)
		}
		env = append(env, "BROWSERPROFILE_PACE_STORE=redis://"+addr)
	}
	ws, envs := make([]*workspace, row.k), make([][]string, row.k)
	for i := range ws {
		dir := shared
		envs[i] = env
		if row.apart {
			own, home := apart(b)
			dir, envs[i] = filepath.Join(home, "pace"), append(own, env...)
		}
		ws[i] = newWorkspace(b, fleetPlan(base, dir, i*fleetReads, fleetReads))
	}
	if timed {
		b.ResetTimer()
	}
	began := time.Now()
	errs := startPlans(ws, envs, fleetReads)()
	r := fleetRun{took: time.Since(began), span: spanned()}
	if timed {
		b.StopTimer()
	}
	r.requests, r.refused = counts()
	if states, _ := filepath.Glob(filepath.Join(shared, "*.state")); row.seed != "" && len(states) != 1 {
		b.Fatalf("%d states after the fleet: the plans did not meet in the one seeded", len(states))
	}
	for _, err := range errs {
		if err != nil {
			r.failed++
			b.Log(err)
		}
	}
	return r
}

// timedServer serves h on loopback, and tells the span of the requests it
// received since the last call, from the first to arrive to the last.
func timedServer(h http.Handler) (*httptest.Server, func() time.Duration) {
	var mu sync.Mutex
	var first, last time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		last = time.Now()
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	return srv, func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		span := last.Sub(first)
		first = time.Time{}
		return span
	}
}
