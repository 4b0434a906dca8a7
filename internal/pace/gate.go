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
// doc). Its Pacer's lock guards it.
type gate struct {
	maxWait time.Duration // the longest a request is held for a reset: past it, it goes, and the refusal says when to come back

	answered bool  // an answer came: whether the service announces is known
	quota    Quota // the last announced, or, once its reset passed, the next window's as far as known
	known    bool  // a quota with a remaining count was announced
	rolled   bool  // quota is the next window's, guessed: the next answer replaces it
	inFlight int   // requests let go and not yet answered
}

// reserve lets a request go at now, counting it in flight until done, and
// returns 0; or returns how long it waits before asking again (an answer
// may let it go sooner), untilAnswered when only an answer can.
func (g *gate) reserve(now time.Time) time.Duration {
	if !g.answered && g.inFlight > 0 {
		return untilAnswered
	}
	if g.known && !g.rolled && !now.Before(g.quota.Reset.Add(resetMargin)) {
		// The window reset: the next allows its limit (one request, to
		// learn it, when none was announced) until an answer says more.
		g.quota.Remaining, g.rolled = max(g.quota.Limit, 1), true
	}
	if g.known && g.quota.Remaining-g.inFlight <= 0 {
		if g.rolled {
			return untilAnswered // the window's limit is a guess
		}
		if wait := g.quota.Reset.Add(resetMargin).Sub(now); wait <= g.maxWait {
			return wait
		}
	}
	g.inFlight++
	return 0
}

// done takes a request out of flight at now, with the headers of its
// answer (nil when none came), and reads the quota they announce. Answers
// may arrive out of order: within one window the least remaining wins, and
// an answer of an earlier window, or whose reset has passed, is old news.
func (g *gate) done(h http.Header, now time.Time) {
	g.inFlight--
	g.answered = true
	if q, ok := Announced(h, now); ok && q.Remaining >= 0 && q.Reset.After(now) {
		switch {
		case !g.known, g.rolled, q.Reset.Sub(g.quota.Reset) >= sameWindow:
			g.quota, g.known, g.rolled = q, true, false
		case g.quota.Reset.Sub(q.Reset) < sameWindow:
			g.quota.Remaining = min(g.quota.Remaining, q.Remaining)
		}
	}
}
