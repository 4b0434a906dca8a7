package client

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// pacingLimiters are the limits real services put in front of an API: rates
// of 50 requests a second, under each limiter; a bucket of one at 30, whose
// rate the first climb reaches within a quarter of a second of the first
// 429; and limits on requests in flight, with the service's work varying.
// The last three are a real nginx (limit_req, refusing past a burst of 10,
// or queueing up to 20 that come too soon) and HAProxy (a stick table's
// request rate, refusals counted) in front of the stand-in, refusing with
// no Retry-After; their opts only say what their limit is, for the ideal,
// as the stand-in behind them has none. make bench runs the others
// through Terraform too.
var pacingLimiters = []struct {
	name  string
	opts  standin.Options
	front frontLimiter
}{
	{"bucket_burst1", standin.Options{RateLimit: 50, RateBurst: 1}, nil},
	{"bucket_burst1_rate30", standin.Options{RateLimit: 30, RateBurst: 1}, nil},
	{"bucket_burst1_jitter", standin.Options{RateLimit: 50, RateBurst: 1, Jitter: 3 * time.Millisecond}, nil},
	{"bucket_burst1_work", standin.Options{RateLimit: 50, RateBurst: 1, Work: 10 * time.Millisecond}, nil},
	{"bucket_burst10", standin.Options{RateLimit: 50, RateBurst: 10}, nil},
	{"bucket_burst50", standin.Options{RateLimit: 50, RateBurst: 50}, nil},
	{"bucket_burst10_date", standin.Options{RateLimit: 50, RateBurst: 10, RetryAfterForm: "date"}, nil},
	{"bucket_burst10_none", standin.Options{RateLimit: 50, RateBurst: 10, RetryAfterForm: "none"}, nil},
	{"bucket_burst10_reset", standin.Options{RateLimit: 50, RateBurst: 10, RetryAfterForm: "reset"}, nil},
	{"fixed_window", standin.Options{RateLimit: 50, RateWindow: true}, nil},
	{"sliding_window", standin.Options{RateLimit: 50, RateSliding: true}, nil},
	{"in_flight4_work", standin.Options{MaxInFlight: 4, Work: 100 * time.Millisecond}, nil},
	{"in_flight2_work", standin.Options{MaxInFlight: 2, Work: 60 * time.Millisecond}, nil},
	{"nginx_limit_req", standin.Options{RateLimit: 50, RateBurst: 10}, startNginx},
	{"nginx_limit_req_queued", standin.Options{RateLimit: 50, RateBurst: 1}, startNginxQueued},
	{"haproxy_rate_counting_refused", standin.Options{RateLimit: 50, RateSliding: true}, startHAProxy},
}

// BenchmarkPacing reads 300 profiles the way Terraform plans them (ten
// walkers, each taking about 85 ms between reads: some 115 reads a second
// offered, as Terraform 1.11 plans them here, all ten starting at once)
// against each limiter, with the provider's default settings. It reports
// the wall time, until the last read ended, as a multiple of the ideal (the
// least time the limit allows, limitedIdeal, or the same reads from the same
// service without its limit, if that is longer) and the share of requests
// answered 429. A machine that
// is busy with other work stretches the unlimited time, not the ratio.
// PACING_TRACE=dir writes each limiter's requests there (standin.Options.Trace),
// and the client's debug log beside them. PACING_LIST=true reads the list
// before the reads, as a plan does (the simulation's plans do), for
// comparing the two; the targets are measured without it.
//
// A limit on requests in flight and the walkers' own pace do not each leave
// the other be, as a rate does: a walker waits for its answer, and the
// answers wait for a place. Its ideal is also no less than the same reads
// from a client told the limit in advance (no more in flight at once, never
// refused).
func BenchmarkPacing(b *testing.B) {
	const reads = 300
	free := map[time.Duration]time.Duration{} // by the service's work
	for _, l := range pacingLimiters {
		if _, ok := free[l.opts.Work]; !ok {
			free[l.opts.Work] = runPacing(context.Background(), b, standin.Options{Work: l.opts.Work}, nil, reads, DefaultMaxConcurrent).wall
		}
	}
	for _, l := range pacingLimiters {
		b.Run(l.name, func(b *testing.B) {
			ideal := max(free[l.opts.Work], limitedIdeal(l.opts, reads))
			if l.opts.MaxInFlight > 0 {
				ideal = max(ideal, runPacing(context.Background(), b, l.opts, nil, reads, l.opts.MaxInFlight).wall)
				b.ResetTimer()
			}
			measurePacing(b, l.name, l.opts, l.front, reads, ideal)
		})
	}
}

// BenchmarkPacingSlowBuckets reads from buckets of one slower than
// pacingLimiters' (2 to 20 requests a second), four reads per request a
// second and 20 at least, as BenchmarkPacing does, and reports the wall time
// against limitedIdeal and the share of requests answered 429. It is not among make
// bench's targets (each plan is too short for the search of a rate to cost
// under 2% of its requests), but shows that such buckets are paced near
// their rate, not taken for windows.
func BenchmarkPacingSlowBuckets(b *testing.B) {
	for _, r := range []float64{2, 5, 10, 15, 20} {
		name := fmt.Sprintf("rate%.0f", r)
		b.Run(name, func(b *testing.B) {
			opts := standin.Options{RateLimit: r, RateBurst: 1}
			reads := max(int(4*r), 20)
			measurePacing(b, name, opts, nil, reads, limitedIdeal(opts, reads))
		})
	}
}

// measurePacing takes reads through the limit in opts b.N times, and
// reports the wall time against ideal and the share of requests answered
// 429. PACING_TRACE=dir writes the requests of each run to a file of its
// own there, dir/name-NNN.txt, numbered across the runs of the process, so
// that -count keeps the trace of a rare slow run, and the client's debug log
// (the pace's events among it) to dir/name-NNN.log, each line led by the
// milliseconds since the run began, as the requests' are.
func measurePacing(b *testing.B, name string, opts standin.Options, front frontLimiter, reads int, ideal time.Duration) {
	b.Helper()
	var wall time.Duration
	var refused, total int64
	for range b.N {
		opts, ctx := opts, context.Background()
		if dir := os.Getenv("PACING_TRACE"); dir != "" {
			traceSeq++
			base := filepath.Join(dir, fmt.Sprintf("%s-%03d", name, traceSeq))
			f, err := os.Create(base + ".txt")
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			log, err := os.Create(base + ".log")
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			opts.Trace = f
			ctx = tflogtest.RootLogger(ctx, &sinceWriter{w: log, start: time.Now()})
		}
		r := runPacing(ctx, b, opts, front, reads, DefaultMaxConcurrent)
		wall += r.wall
		refused += r.refused
		total += r.requests
	}
	b.ReportMetric(float64(wall)/float64(ideal)/float64(b.N), "x-ideal")
	b.ReportMetric(100*float64(refused)/float64(total), "%429")
}

// limitedIdeal is the least time reads take through the rate limit in
// opts: a token bucket lets its burst through at once, and the rest at its
// rate, ((301 - 10) / 50 = 5.8 s); a window, all at
// its rate, as what it accepts at once is soon spent at the pace reads are
// offered, and then waits for the next one. A limit on requests in flight
// allows as many at once, each held for its work (up to opts.Work at
// random, half of it on average).
//
// A bucket of one refuses a request counted less than an interval after the
// last one, and a service that counts each request up to opts.Jitter late
// at random counts it, on average, half that later than it was sent. No
// client knows before it sends a request how late it will be counted: one
// sent sooner than an interval after the last was counted is refused
// whenever it is counted early, so none has its requests counted closer
// than the interval and half the jitter, on average, without 429s.
func limitedIdeal(opts standin.Options, reads int) time.Duration {
	if opts.MaxInFlight > 0 {
		return time.Duration(reads) * opts.Work / 2 / time.Duration(opts.MaxInFlight)
	}
	if opts.RateLimit <= 0 {
		return 0
	}
	atOnce := 0.0
	switch {
	case opts.RateWindow || opts.RateSliding:
	case opts.RateBurst > 0:
		atOnce = float64(opts.RateBurst)
	default: // the stand-in's bucket holds a second's worth
		atOnce = opts.RateLimit
	}
	each := time.Duration(float64(time.Second) / opts.RateLimit)
	if opts.RateBurst == 1 {
		each += opts.Jitter / 2
	}
	return time.Duration(float64(reads)-atOnce) * each
}

// traceSeq numbers the runs of the process that PACING_TRACE writes.
var traceSeq int

// sinceWriter leads each write (a logger writes a line at a time) with the
// milliseconds since start, as the stand-in's trace leads its lines.
type sinceWriter struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (s *sinceWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := fmt.Fprintf(s.w, "%.1f ", float64(time.Since(s.start).Microseconds())/1000); err != nil {
		return 0, err
	}
	return s.w.Write(p)
}

type pacingRun struct {
	wall              time.Duration
	requests, refused int64
}

// runPacing takes reads as Terraform's walkers do, through a client with the
// provider's default settings but for maxConcurrent, from the stand-in
// limited by opts, or, with a front, from an unlimited one behind it.
func runPacing(ctx context.Context, b *testing.B, opts standin.Options, front frontLimiter, reads, maxConcurrent int) pacingRun {
	b.Helper()
	if front != nil {
		opts = standin.Options{Work: opts.Work, Trace: opts.Trace}
	}
	opts.Environments = []standin.Environment{{Name: "development", Token: testToken, Profiles: standin.Generate(reads)}}
	s := standin.New(opts)
	srv := httptest.NewServer(s)
	defer srv.Close()
	addr, statuses := srv.Listener.Addr().String(), func() []string { return nil }
	if front != nil {
		addr, statuses = front(b, addr)
	}
	base, err := ParseBaseURL("http://" + addr + "/development/api/v1")
	if err != nil {
		b.Fatal(err)
	}
	// The pace shared, as the provider's default has it, with no one else;
	// PACING_SHARE=false for the pace of a Pacer that shares nothing.
	c, err := New(Config{BaseURL: base, Token: testToken, UserAgent: "bench/1", MaxRetries: DefaultMaxRetries,
		MinWait: DefaultMinWait, MaxWait: DefaultMaxWait, Timeout: DefaultTimeout, MaxConcurrent: maxConcurrent,
		SharePace: os.Getenv("PACING_SHARE") != "false", PaceDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if os.Getenv("PACING_LIST") == "true" {
		// The list first, then Terraform's some 100 ms to expand its
		// for_each, as the simulation has it (internal/pace, simulate): the
		// pace's first second then counts from the list's request.
		if _, err := c.ListProfiles(ctx); err != nil {
			b.Fatal(err)
		}
		time.Sleep(80*time.Millisecond + rand.N(40*time.Millisecond))
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	ended := make([]time.Duration, 10) // by walker: when its last read ended
	for w := range ended {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(reads); i = next.Add(1) - 1 {
				if _, err := c.GetProfile(ctx, fmt.Sprintf("bp_gen_%07d", i)); err != nil {
					b.Error(err)
				}
				ended[w] = time.Since(start)
				time.Sleep(20*time.Millisecond + rand.N(130*time.Millisecond))
			}
		}()
	}
	wg.Wait()
	// Until the last read ended: a walker's pause after its last read is
	// not part of the plan, as Terraform takes none.
	run := pacingRun{wall: slices.Max(ended), requests: s.Requests.Load(), refused: s.Limited.Load()}
	if front != nil {
		all := statuses()
		run.requests, run.refused = int64(len(all)), int64(daemons.Refusals(all))
	}
	return run
}
