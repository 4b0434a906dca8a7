package standin

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// How the stand-in refuses and delays requests, as real limiters and
// networks do: 429s with their headers, announced quotas, fixed and sliding
// windows, latency.

// tooMany answers 429, saying when to come back in the configured form:
// the wait rounded up to whole seconds, as an HTTP date, as the time the
// limit resets, or not at all; or the configured fixed value.
func (s *Server) tooMany(w http.ResponseWriter, wait time.Duration) {
	s.Limited.Add(1)
	secs := max(1, int(math.Ceil(wait.Seconds())))
	switch {
	case s.opts.RetryAfterForm == "reset":
		// As many services do instead: when the limit resets, as a Unix
		// time in whole seconds, rounded up.
		reset := strconv.FormatInt(time.Now().Add(wait+time.Second-1).Unix(), 10)
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(int(s.opts.RateLimit)))
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", cmp.Or(s.opts.RetryAfter, reset))
	case s.opts.RetryAfter != "":
		w.Header().Set("Retry-After", s.opts.RetryAfter)
	case s.opts.RetryAfterForm == "date":
		w.Header().Set("Retry-After", time.Now().Add(time.Duration(secs)*time.Second).UTC().Format(http.TimeFormat))
	case s.opts.RetryAfterForm == "none":
	default:
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	writeJSON(w, cmp.Or(s.opts.LimitStatus, http.StatusTooManyRequests), map[string]string{"error": "rate limit exceeded"})
}

// announce writes the quota's headers in the configured family: what
// remains (none, when refused) and the reset, rounded up to whole seconds
// (a Unix time, or seconds from now).
func (s *Server) announce(h http.Header, remaining int, reset time.Time) {
	secs := int(math.Ceil(time.Until(reset).Seconds()))
	remaining = max(remaining, 0)
	switch s.opts.Announce {
	case "github":
		h.Set("X-RateLimit-Limit", strconv.Itoa(s.opts.Quota))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(int64(math.Ceil(float64(reset.UnixNano())/1e9)), 10))
	case "ietf":
		window := int(math.Ceil(cmp.Or(s.opts.QuotaWindow, time.Second).Seconds()))
		h.Set("RateLimit-Policy", fmt.Sprintf(`"default";q=%d;w=%d`, s.opts.Quota, window))
		h.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d`, remaining, secs))
	}
}

// quotaWindow counts requests in fixed windows of any length, from a start.
type quotaWindow struct {
	mu    sync.Mutex
	index int64
	used  int
}

// take counts one request at now, and returns what remains of its window
// (-1 when it is refused) and when the window resets.
func (q *quotaWindow) take(now, start time.Time, window time.Duration, limit int) (int, time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := int64(now.Sub(start) / window)
	if i != q.index {
		q.index, q.used = i, 0
	}
	reset := start.Add(time.Duration(i+1) * window)
	if q.used >= limit {
		return -1, reset
	}
	q.used++
	return limit - q.used, reset
}

// fixedWindow counts requests per wall-clock second.
type fixedWindow struct {
	mu    sync.Mutex
	start time.Time
	used  int
}

// take counts one request; when the window's limit is spent it returns
// how long until the next window.
func (f *fixedWindow) take(now time.Time, limit int) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sec := now.Truncate(time.Second); !sec.Equal(f.start) {
		f.start, f.used = sec, 0
	}
	if f.used >= limit {
		return f.start.Add(time.Second).Sub(now), false
	}
	f.used++
	return 0, true
}

// slidingLog counts the requests accepted in the last second, whenever it
// began.
type slidingLog struct {
	mu       sync.Mutex
	accepted []time.Time
}

// take counts one request; when the last second's limit is spent it returns
// how long until the oldest of them leaves it.
func (l *slidingLog) take(now time.Time, limit int, countRefused bool) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for i < len(l.accepted) && !l.accepted[i].After(now.Add(-time.Second)) {
		i++
	}
	l.accepted = append(l.accepted[:0], l.accepted[i:]...)
	if len(l.accepted) >= limit {
		wait := l.accepted[0].Add(time.Second).Sub(now)
		if countRefused {
			l.accepted = append(l.accepted, now)
		}
		return wait, false
	}
	l.accepted = append(l.accepted, now)
	return 0, true
}

// lateWriter holds an answer back by late before its first byte leaves,
// as the way back over a network does.
type lateWriter struct {
	http.ResponseWriter
	r    *http.Request
	late time.Duration
	held bool
}

func (w *lateWriter) hold() {
	if !w.held {
		w.held = true
		hold(w.r, w.late)
	}
}

func (w *lateWriter) WriteHeader(status int) { w.hold(); w.ResponseWriter.WriteHeader(status) }

func (w *lateWriter) Write(b []byte) (int, error) { w.hold(); return w.ResponseWriter.Write(b) }

// hold waits for d, or until the request is given up: false then.
func hold(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
		return false
	}
}

// randN is a random duration in [0, d), or 0.
func randN(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}
