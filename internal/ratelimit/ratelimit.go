// Package ratelimit models the limiters real services put in front of their
// APIs, for the stand-in, which runs them in real time, and the pacer's
// simulation, which runs them in virtual time: every call is told the time.
//
// Each model counts one request as it arrives and either accepts it or
// refuses it with the wait until it would be accepted; RetryAfter rounds
// that wait as services send it. The models are:
//
//   - Bucket: a token bucket (nginx's limit_req, most API gateways), which
//     is x/time/rate itself; a burst of one is a leaky bucket.
//   - FixedWindow: so many requests per wall-clock second.
//   - RollingWindow: so many requests in any second, counting refused ones
//     too if told to, as HAProxy's stick-table request rate does.
//   - InFlight: so many requests at once, whatever the rate.
//   - Quota: so many requests in fixed windows of any length from a start,
//     announced on every answer (Announce) in GitHub's X-RateLimit headers
//     or the IETF draft's RateLimit and RateLimit-Policy.
//
// All are safe for concurrent use.
package ratelimit

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// RetryAfter rounds a wait up to whole seconds, at least one, as services
// send it in Retry-After.
func RetryAfter(wait time.Duration) time.Duration {
	return max(time.Second, time.Duration(math.Ceil(wait.Seconds()))*time.Second)
}

// Bucket is a token bucket: r requests a second, burst at once.
type Bucket struct{ l *rate.Limiter }

// NewBucket returns a full bucket.
func NewBucket(r float64, burst int) *Bucket {
	return &Bucket{rate.NewLimiter(rate.Limit(r), burst)}
}

// Take counts a request arriving at now; a refused one takes no token.
func (b *Bucket) Take(now time.Time) (wait time.Duration, ok bool) {
	r := b.l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// Rate is the bucket's rate, in requests a second.
func (b *Bucket) Rate() float64 { return float64(b.l.Limit()) }

// SetRate changes the rate from now on.
func (b *Bucket) SetRate(now time.Time, r float64) { b.l.SetLimitAt(now, rate.Limit(r)) }

// Queued is nginx's limit_req without nodelay: a request that comes
// sooner than the rate allows waits its turn, so requests reach the
// service at the rate, and one that would find burst waiting before it is
// refused (ngx_http_limit_req_lookup's excess, in requests).
type Queued struct {
	l     *rate.Limiter
	burst int
}

// NewQueued returns an empty queue.
func NewQueued(r float64, burst int) *Queued {
	return &Queued{l: rate.NewLimiter(rate.Limit(r), 1), burst: burst}
}

// Take counts a request arriving at now: accepted once it has waited
// delay, or refused, taking no place.
func (q *Queued) Take(now time.Time) (delay time.Duration, ok bool) {
	r := q.l.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if float64(d)*float64(q.l.Limit()) > float64(q.burst)*float64(time.Second) {
		r.CancelAt(now)
		return 0, false
	}
	return d, true
}

// FixedWindow counts requests per wall-clock second.
type FixedWindow struct {
	mu     sync.Mutex
	second int64
	used   int
}

// Take counts a request arriving at now; once limit are spent in its
// second, it is refused until the next second begins.
func (w *FixedWindow) Take(now time.Time, limit int) (wait time.Duration, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := now.Unix(); s != w.second {
		w.second, w.used = s, 0
	}
	if w.used >= limit {
		return time.Unix(w.second+1, 0).Sub(now), false
	}
	w.used++
	return 0, true
}

// RollingWindow counts the requests of the last second, whenever it began.
type RollingWindow struct {
	mu    sync.Mutex
	times []time.Time // ascending
}

// Take counts a request arriving at now: refused once limit are counted in
// the second before it, and then counted too when countRefused, so that a
// client that keeps asking keeps itself refused. The wait is until enough
// have left the second for one more.
func (w *RollingWindow) Take(now time.Time, limit int, countRefused bool) (wait time.Duration, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, _ := slices.BinarySearchFunc(w.times, now.Add(-time.Second), time.Time.Compare)
	w.times = append(w.times[:0], w.times[i:]...)
	ok = len(w.times) < limit
	if ok || countRefused {
		w.times = append(w.times, now)
	}
	if !ok {
		return w.times[len(w.times)-limit].Add(time.Second).Sub(now), false
	}
	return 0, true
}

// PeriodRate is HAProxy's request rate (a stick table's http_req_rate,
// its freq_ctr): the requests of the current period, plus those of the
// period before, weighted by the share of that period still less than a
// period ago. Every request is counted, refused ones too (track-sc0
// counts it before the deny rule reads the rate), so a client that keeps
// asking keeps itself refused; the periods follow one another from the
// first request, and from the first after two or more quiet periods.
type PeriodRate struct {
	mu         sync.Mutex
	start      time.Time // the current period's
	curr, prev int
}

// Take counts a request arriving at now: refused when the rate, itself
// included, is over limit. The wait is what remains of the period.
func (r *PeriodRate) Take(now time.Time, limit int, period time.Duration) (wait time.Duration, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.start.IsZero() {
		r.start = now
	}
	if gone := now.Sub(r.start); gone >= period {
		r.prev, r.curr, r.start = r.curr, 0, r.start.Add(period)
		if gone >= 2*period {
			// Two periods missed: the new one begins now (HAProxy's
			// update_freq_ctr_period), not on the periods' old grid.
			r.prev, r.start = 0, now
		}
	}
	r.curr++
	left := period - now.Sub(r.start)
	if r.curr+int(int64(r.prev)*int64(left)/int64(period)) > limit {
		return left, false
	}
	return 0, true
}

// InFlight counts the requests being answered.
type InFlight struct{ n atomic.Int64 }

// Enter counts a request arriving, refused when limit are in flight; an
// accepted one must Leave when answered.
func (l *InFlight) Enter(limit int) bool {
	if l.n.Add(1) > int64(limit) {
		l.n.Add(-1)
		return false
	}
	return true
}

// Leave counts a request answered.
func (l *InFlight) Leave() { l.n.Add(-1) }

// Quota counts Limit requests in each window of Window (more than zero),
// the windows beginning at Start; or, when Opened, each window beginning
// with the first request to arrive after the last one ended, as GitHub's
// do, so that no two windows need fall at the same point of a second.
// Requests are taken in the order they arrive.
type Quota struct {
	Limit  int
	Window time.Duration
	Start  time.Time
	Opened bool

	mu    sync.Mutex
	index int64
	end   time.Time // when Opened: the window's end; zero before the first
	used  int
}

// Take counts a request arriving at now, and returns what remains of its
// window once it is counted (-1: it is refused) and when the window ends.
func (q *Quota) Take(now time.Time) (remaining int, reset time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.Opened {
		if q.end.IsZero() || !now.Before(q.end) {
			q.end, q.used = now.Add(q.Window), 0
		}
		reset = q.end
	} else {
		i := int64(now.Sub(q.Start) / q.Window)
		if i != q.index {
			q.index, q.used = i, 0
		}
		reset = q.Start.Add(time.Duration(i+1) * q.Window)
	}
	if q.used >= q.Limit {
		return -1, reset
	}
	q.used++
	return q.Limit - q.used, reset
}

// Announce writes q's headers in family for an answer at now: what
// remains (none, when refused) and the reset. "github" and "ietf" round the
// reset up to whole seconds, as a Unix time or from now; "discord" gives
// it to the millisecond, both ways. Any other family writes none.
func (q *Quota) Announce(h http.Header, family string, now time.Time, remaining int, reset time.Time) {
	remaining = max(remaining, 0)
	switch family {
	case "github":
		h.Set("X-RateLimit-Limit", strconv.Itoa(q.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(int64(math.Ceil(float64(reset.UnixNano())/1e9)), 10))
	case "discord":
		h.Set("X-RateLimit-Limit", strconv.Itoa(q.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(reset.UnixMilli())/1e3, 'f', 3, 64))
		h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(reset.Sub(now).Seconds(), 'f', 3, 64))
	case "ietf":
		window := int(math.Ceil(q.Window.Seconds()))
		h.Set("RateLimit-Policy", fmt.Sprintf(`"default";q=%d;w=%d`, q.Limit, window))
		h.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d`, remaining, int(math.Ceil(reset.Sub(now).Seconds()))))
	}
}
