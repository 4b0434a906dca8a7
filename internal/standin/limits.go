package standin

import (
	"cmp"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/ratelimit"
)

// How the stand-in refuses and delays requests, as real limiters and
// networks do: 429s with their headers, and latency. The limiters
// themselves are package ratelimit's.

// tooMany answers 429, saying when to come back in the configured form:
// the wait rounded up to whole seconds, as an HTTP date, as the time the
// limit resets, or not at all; or the configured fixed value.
func (s *Server) tooMany(w http.ResponseWriter, wait time.Duration) {
	s.Limited.Add(1)
	secs := int(ratelimit.RetryAfter(wait) / time.Second)
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
