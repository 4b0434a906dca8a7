package pace

import (
	"net/http"
	"time"
)

// Clock is what a Pacer needs of time, so that tests can run it in virtual
// time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time                         { return time.Now() }
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// resetMargin is how long after an announced reset requests go again, for
// the service's clock.
const resetMargin = 20 * time.Millisecond

// sameWindow is how close two announced resets must be to be one window's:
// resets given as seconds from now drift by their rounding.
const sameWindow = time.Second

// gate holds requests to the quota the service announced last (package
// doc). It is part of the model, a plain value; its Pacer's lock guards it,
// and its Pacer counts the requests in flight.
type gate struct {
	answered bool   // an answer came: whether the service announces is known
	quota    window // the last announced, or, once its reset passed, the next window's as far as known
	known    bool   // a quota with a remaining count was announced
	rolled   bool   // quota is the next window's, guessed: the next answer replaces it
}

// window is a quota's numbers, without the header text they were read from.
type window struct {
	Limit, Remaining int
	Reset            time.Time
}

// reserve tells whether a request may go at now, with inFlight let go and
// not yet answered: 0 when it may (the caller counts it in flight until
// done), or how long it waits before asking again (an answer may let it go
// sooner), untilAnswered when only an answer can. A reset further off than
// maxWait is not waited for: the request goes, and the refusal says when to
// come back.
func (g *gate) reserve(now time.Time, inFlight int, maxWait time.Duration) time.Duration {
	if !g.answered && inFlight > 0 {
		return untilAnswered
	}
	if g.known && !g.rolled && !now.Before(g.quota.Reset.Add(resetMargin)) {
		// The window reset: the next allows its limit (one request, to
		// learn it, when none was announced) until an answer says more.
		g.quota.Remaining, g.rolled = max(g.quota.Limit, 1), true
	}
	if g.known && g.quota.Remaining-inFlight <= 0 {
		if g.rolled {
			return untilAnswered // the window's limit is a guess
		}
		if wait := g.quota.Reset.Add(resetMargin).Sub(now); wait <= maxWait {
			return wait
		}
	}
	return 0
}

// done reads the quota announced by the headers of an answer at now (nil
// when none came). Answers may arrive out of order: within one window the
// least remaining wins, and an answer of an earlier window, or whose reset
// has passed, is old news.
func (g *gate) done(h http.Header, now time.Time) {
	g.answered = true
	if q, ok := Announced(h, now); ok && q.Remaining >= 0 && q.Reset.After(now) {
		switch {
		case !g.known, g.rolled, q.Reset.Sub(g.quota.Reset) >= sameWindow:
			g.quota, g.known, g.rolled = window{Limit: q.Limit, Remaining: q.Remaining, Reset: q.Reset}, true, false
		case g.quota.Reset.Sub(q.Reset) < sameWindow:
			g.quota.Remaining = min(g.quota.Remaining, q.Remaining)
		}
	}
}
