package pace

import (
	"cmp"
	"math"
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

// endProbes is how many of a window's last requests a gate alone holds to
// learn where the window ends: each goes at its share of where it may end,
// so that where one answer halves it, three quarter it.
const endProbes = 3

// sameWindow is how close two announced resets must be to be one window's:
// resets given as seconds from now drift by their rounding.
const sameWindow = time.Second

// The fair share's parameters (package doc).
const (
	// shareFall is how far a window's count must have fallen for a first
	// share to be measured from it, and how many answers' worth the share
	// a window began with weighs against the window's own.
	shareFall = 4
	// aloneShare is the least measured share of a Pacer taken to be alone
	// (or a whole fleet's, sharing the model): it spends at once.
	aloneShare = 0.9
)

// gate holds requests to the quota the service announced last (package
// doc). It is part of the model, a plain value; its Pacer's lock guards it,
// and its Pacer counts the requests in flight.
type gate struct {
	answered bool   // an answer came: whether the service announces is known
	quota    window // the last announced, or, once its reset passed, the next window's as far as known
	known    bool   // a quota with a remaining count was announced
	rolled   bool   // quota is the next window's, guessed: the next answer replaces it
	// The fair share: this Pacer's answers against the quota's fall.
	top    int       // where the window's count fell from: its limit, or the most remaining an answer announced
	spent  int       // the window's answers counted in that fall
	share  float64   // the share of the quota's fall that is this Pacer's, last measured; 0 before
	prior  float64   // the share when the window began
	guess  bool      // prior is the first window's guess, from what fell before its first answer, until its second
	lastGo time.Time // when the gate last let a request go
	drifts bool      // the window's answers gave resets apart: seconds from now, each rounded
	// Where a window whose reset is rounded alike in every answer ends, by
	// two readings (package doc). Fixed: windows end the same time before
	// their reset, at least early and less than late (0: sameWindow);
	// notFixed once answers contradicted it, when both start again from
	// nothing. Opened: a window begins with the request that opens it, and
	// ends more than lastsOver and at most lastsAtMost (0: nothing known)
	// after that request went (opener, the gate's own answered with all
	// but one of the limit remaining; zero when none was); notOpened, and
	// nothing kept, once answers contradicted it.
	early, late            time.Duration
	lastsOver, lastsAtMost time.Duration
	opener                 time.Time
	notFixed, notOpened    bool
	short                  bool // a request waited for the reset of a window spent
}

// window is a quota's numbers, without the header text they were read from.
type window struct {
	Limit, Remaining int
	Reset            time.Time
}

// resetAt is when the window is taken to reset, resetMargin after it ends
// by every standing reading (ends). A reset given as seconds from now is
// nearest in the answer that rounds least, which done keeps.
func (g *gate) resetAt() time.Time {
	_, by := g.ends()
	return by.Add(resetMargin)
}

// ends is where the gate's window ends, by the readings of a reset rounded
// alike (package doc): by by under each that stands, so that a request let
// go then is counted in the next window whichever holds, and after after
// under the one that ends it latest. The fixed reading, once contradicted,
// speaks only where the opened one cannot. With a reset that drifts:
// anywhere in the second before it.
func (g *gate) ends() (after, by time.Time) {
	reset := g.quota.Reset
	after, by = reset.Add(-sameWindow), reset
	if g.drifts {
		return after, by
	}
	after, by = reset.Add(-cmp.Or(g.late, sameWindow)), reset.Add(-g.early)
	if !g.opened() {
		return after, by
	}
	oAfter, oBy := g.opener.Add(g.lastsOver), g.opener.Add(g.lastsAtMost)
	if g.notFixed {
		return oAfter, oBy
	}
	return maxTime(after, oAfter), maxTime(by, oBy)
}

// spreadUntil is when a crowded gate's share of the window is to be spent:
// the reset, or, once answers said where a window rounded alike ends, the
// middle of where it may end, so that the last requests tell which side
// of it they went (never refused: they are the gate's own).
func (g *gate) spreadUntil() time.Time {
	if g.drifts || g.late == 0 && !g.opened() {
		return g.resetAt()
	}
	after, by := g.ends()
	return after.Add(by.Sub(after)/2 + resetMargin)
}

// unsure tells that where the gate's window ends is known no closer than
// resetMargin, and answers may tell more: its reset does not drift.
func (g *gate) unsure() bool {
	after, by := g.ends()
	return g.known && !g.drifts && by.Sub(after) > resetMargin
}

// crowded tells a Pacer that others spend the quota too: its share was
// measured, and is not all of it.
func (g *gate) crowded() bool { return g.share > 0 && g.share < aloneShare }

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
	reset := g.resetAt()
	if g.known && !g.rolled && !now.Before(reset) {
		// The window reset: the next allows its limit (one request, to
		// learn it, when none was announced) until an answer says more.
		g.quota.Remaining, g.rolled = max(g.quota.Limit, 1), true
	}
	allowed := float64(g.quota.Remaining) // in flight at once
	if g.crowded() {
		allowed *= g.share
		if g.rolled {
			allowed = max(allowed, 1)
		}
	}
	switch budget := allowed - float64(inFlight); {
	case !g.known:
	case g.guess && inFlight == 0 && g.quota.Remaining > 0:
		// The share is a guess: one request tells whether others spend.
	case budget < 1 && g.rolled:
		return untilAnswered // the window's limit is a guess
	case budget < 1:
		if wait := reset.Sub(now); wait <= maxWait {
			g.short = g.short || g.quota.Remaining <= inFlight
			return wait
		}
	case budget < endProbes+1 && g.short && !g.rolled && !g.crowded() && g.unsure():
		// Where the requests need more than a window gives, the window's
		// last endProbes go spread over where the window may end, the
		// first a quarter of the way: answered in it, or opening the
		// next, each narrows where it ends, and none is refused. Not past
		// maxWait, and not before a request waited for a reset: a run
		// that needs no more than remains never waits for them.
		after, by := g.ends()
		left := time.Duration(math.Ceil(budget))
		if wait := after.Add(by.Sub(after) / (left + 1)).Sub(now); wait > 0 && wait <= maxWait {
			return wait
		}
	case g.crowded() && !g.rolled:
		// Its share of what remains, spread evenly until the reset, or
		// over maxWait when the reset is further: the gate plans no
		// further ahead than it waits.
		gap := nanos(float64(min(g.spreadUntil().Sub(now), maxWait)) / budget)
		if wait := g.lastGo.Add(gap).Sub(now); wait > 0 {
			return wait
		}
	}
	g.lastGo = now
	return 0
}

// done reads the quota announced by the headers of the answer at now to a
// request sent at sent (nil when none came). Answers may arrive out of
// order: within one window the least remaining wins, and an answer of an
// earlier window, or whose reset has passed, is old news. Each accepted
// answer of a window after its first counts to the share. An answer of the
// gate's window says it ends after the request went (endsAfter), one of a
// later window that it ended by now (endedBy), and one with all but one of
// the limit remaining that the request opened it (opens). A refusal is
// read by refused, and done tells whether it was the quota's.
func (g *gate) done(h http.Header, refused bool, sent, now time.Time) (quotas bool) {
	g.answered = true
	afterRoll := g.rolled && !sent.Before(g.resetAt())
	if refused {
		return g.refused(h, afterRoll, sent, now)
	}
	q, ok := Announced(h, now)
	if !ok || q.Remaining < 0 || !q.Reset.After(now) {
		return
	}
	switch next := q.Reset.Sub(g.quota.Reset); {
	case g.rolled && next < sameWindow:
		if afterRoll && -next < sameWindow {
			// The window had not reset when it was taken to.
			g.rolled = false
			g.quota.Remaining = min(q.Remaining, g.quota.Remaining)
			g.endsAfter(sent)
		}
	case !g.known, g.rolled, next >= sameWindow:
		if g.known {
			g.endedBy(now)
		}
		g.quota, g.known, g.rolled, g.opener = window{Limit: q.Limit, Remaining: q.Remaining, Reset: q.Reset}, true, false, time.Time{}
		g.opens(q, sent)
		g.top, g.spent, g.drifts, g.prior, g.guess = q.Remaining, 0, false, g.share, false
		switch {
		case q.Limit <= q.Remaining:
			// No limit announced: the fall counts from this answer.
		case g.prior > 0:
			// It spent in the window before: what others spent in this
			// one since it began, they spent beside it.
			g.top, g.spent = q.Limit, 1
		default:
			// Its first window: what others spent in it before this
			// answer, they may still spend, or have ended. The share it
			// begins with is a guess that they still spend, which its
			// next request, let go at once, tests.
			g.prior, g.guess = 1/float64(q.Limit-q.Remaining), true
		}
		g.measure()
	case -next < sameWindow:
		// A reset given as seconds from now, rounded up, is nearest the
		// window's end in the answer that rounds least.
		g.drifts = g.drifts || !q.Reset.Equal(g.quota.Reset)
		g.quota.Remaining, g.quota.Reset = min(g.quota.Remaining, q.Remaining), minTime(g.quota.Reset, q.Reset)
		g.opens(q, sent)
		g.endsAfter(sent)
		g.top = max(g.top, q.Remaining)
		g.spent++
		g.measure()
	}
	return false
}

// refused reads a refusal of a request, sent once the reset was taken to
// have come when afterRoll, and tells whether it was the quota's. Its own
// quota, often a rounding of a much shorter wait, is no window to go by;
// but one announcing nothing remaining of the gate's window, or of one
// before it, of the same limit, was the quota's, spent by others beside
// this Pacer, and says nothing of any other limit. Of the gate's window
// (its reset within sameWindow), it is spent: the gate holds requests
// until the reset, and the count's fall to nothing counts to the share.
// One sent after the reset was taken to have come says the window had not
// reset, so the reset the gate would hold requests until is behind it (its
// clock and the service's differ, or the window ends late): that refusal
// is read as any other, so that the pace, not the gate, spaces what
// follows.
func (g *gate) refused(h http.Header, afterRoll bool, sent, now time.Time) bool {
	if afterRoll {
		g.rolled, g.quota.Remaining = false, 0
		g.endsAfter(sent)
		return false
	}
	q, ok := Announced(h, now)
	next := q.Reset.Sub(g.quota.Reset)
	sameLimit := q.Limit < 0 || g.quota.Limit < 0 || q.Limit == g.quota.Limit
	if !ok || !g.known || q.Remaining != 0 || !sameLimit || next >= sameWindow {
		return false
	}
	if !g.rolled && -next < sameWindow {
		g.quota.Remaining = 0
		g.endsAfter(sent)
		g.measure()
	}
	return true
}

// opens reads an answer of the gate's window to its request sent at sent:
// one announcing all but one of the limit remaining opened the window, if
// windows open with a request, and the window then ends more than
// sameWindow before its reset (rounded up) and at the reset at the latest,
// after sent.
func (g *gate) opens(q Quota, sent time.Time) {
	if g.drifts || g.notOpened || !g.opener.IsZero() || q.Limit <= 0 || q.Remaining != q.Limit-1 {
		return
	}
	g.opener = sent
	g.lasts(q.Reset.Sub(sent)-sameWindow, q.Reset.Sub(sent))
}

// endsAfter reads a request sent at sent and counted in the gate's
// window: the window ends after it. A fixed reading it contradicts starts
// again from nothing.
func (g *gate) endsAfter(sent time.Time) {
	if g.drifts {
		return
	}
	if before := g.quota.Reset.Sub(sent); before > g.early {
		g.late = min(cmp.Or(g.late, sameWindow), before)
	} else {
		g.notFixed, g.early, g.late = true, 0, 0
	}
	if !g.opener.IsZero() {
		g.lasts(sent.Sub(g.opener), g.lastsAtMost)
	}
}

// endedBy reads an answer at now of a window after the gate's: the
// gate's window ended by then. A fixed reading it contradicts starts again
// from nothing.
func (g *gate) endedBy(now time.Time) {
	if g.drifts {
		return
	}
	switch before := min(g.quota.Reset.Sub(now), sameWindow); {
	case before <= g.early:
	case before < cmp.Or(g.late, sameWindow):
		g.early = before
	default:
		g.notFixed, g.early, g.late = true, 0, 0
	}
	if !g.opener.IsZero() {
		g.lasts(g.lastsOver, now.Sub(g.opener))
	}
}

// opened tells that the reading of windows opened by a request stands,
// and says when the gate's window opened.
func (g *gate) opened() bool {
	return !g.notOpened && !g.opener.IsZero() && g.lastsAtMost > 0
}

// lasts narrows how long a window opened by a request lasts after its
// opener went to more than over and at most atMost.
func (g *gate) lasts(over, atMost time.Duration) {
	if g.notOpened {
		return
	}
	if g.lastsAtMost == 0 {
		g.lastsOver, g.lastsAtMost = max(over, 0), atMost
	} else {
		g.lastsOver, g.lastsAtMost = max(g.lastsOver, over), min(g.lastsAtMost, atMost)
	}
	if g.lastsOver >= g.lastsAtMost {
		g.notOpened, g.lastsOver, g.lastsAtMost, g.opener = true, 0, 0, time.Time{}
	}
}

// measure takes the share from the window's answers: weighed with the
// share the window began with as shareFall answers' worth, or, before
// there was one, once the quota fell shareFall. A guess is dropped at the
// answer that tests it if the count fell by the gate's requests alone.
func (g *gate) measure() {
	fall := g.top - g.quota.Remaining
	if g.guess && g.spent > 0 {
		g.guess = false
		if fall == g.spent {
			// Nobody spent beside it: those before it ended.
			g.prior, g.share = 0, 0
		}
	}
	switch {
	case g.prior > 0:
		g.share = min(1, (float64(g.spent)+shareFall*g.prior)/float64(fall+shareFall))
	case fall >= shareFall:
		g.share = min(1, float64(g.spent)/float64(fall))
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
