package pace

import (
	"cmp"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// A commit the store was busy for (ErrBusy: others held its lock, or kept
// saving first, for the store's bounded wait; or a ctx done meanwhile).
// The model: a busy store says nothing of the pace but that this process's
// copy of the state may be stale, its tokens taken by others since. So no
// request goes on that copy: an ask waits for its turn as the copy tells
// it and asks again, while an answer or a release runs on the copy, as it
// must be counted. Requests let go on such copies were nine in ten of the
// refusals of 256 runs through one Redis (BENCHMARKS.md). A store that
// ran the steps and found others saving first shows the fleet going on,
// and holds the requests for as long as it is busy; one that runs no step
// at all for BusyFor (a lock held by a process stopped under Ctrl-Z) is
// taken for held by a run that stopped, and lets them go on the copy.

// markBusy keeps when the store began to be busy without running the
// steps, one commit after another.
func (s *sharing) markBusy(busy bool, r *commitRun) {
	switch {
	case !busy || r.ran: // a store that ran the steps is not held
		s.busySince = time.Time{}
	case s.busySince.IsZero():
		s.busySince = r.began
	}
}

// holdBusy runs a busy commit's steps on the copy, but that each ask
// waits rather than go, and tells whether it did: not once the store has
// run no step for BusyFor. p.mu is held.
func (p *Pacer) holdBusy(r *commitRun, err error, now time.Time) bool {
	if !r.ran && now.Sub(p.shared.busySince) >= BusyFor {
		return false
	}
	if r.ran { // on a state they could not save: they run again, on the copy
		p.undo(r)
	}
	p.event("the shared pace's store was busy: requests wait for their turn to ask again", map[string]any{"reason": err.Error()})
	for _, q := range r.ops {
		if q.busy != nil {
			q.busy()
		} else {
			q.op(now)
		}
	}
	return true
}

// busyWait is how long an ask the store was too busy to run waits before
// it asks again: till its turn, the next token and a token for each member
// waiting before it, as the copy tells them; at least SharedPoll. It waits
// from its first ask on: its place in the turns is kept from then, as a
// member whose steps end busy again and again would otherwise come after
// every member that began to wait meanwhile. p.mu is held.
func (p *Pacer) busyWait(now time.Time) time.Duration {
	p.own.Waiting = cmp.Or(p.own.Waiting, now)
	p.ahead = p.turnsAhead(p.own.Waiting)
	return max(SharedPoll, p.tokenWait(now)+p.ahead)
}

// ownCopy is a process's copy of the shared model as last loaded, kept
// apart from the steps that run on it.
type ownCopy struct {
	model                model
	pace                 tokenState
	inFlight, unanswered int
}

// copyOwn copies p's model as loaded at now: the steps change the model's
// lists in place. p.mu is held.
func (p *Pacer) copyOwn(now time.Time) ownCopy {
	pace := tokenState{limit: float64(p.pace.Limit()), tokens: p.pace.TokensAt(now), at: now}
	return ownCopy{p.clone(), pace, p.inFlight, p.unanswered}
}

// clone is a copy of m that shares no list with it.
func (m model) clone() model {
	m.sent, m.accepts, m.othersAccepted = slices.Clone(m.sent), slices.Clone(m.accepts), slices.Clone(m.othersAccepted)
	return m
}

// undo takes back what a run of r's steps did to p: they ran on a state
// that was not saved, and run again on the copy as loaded. p.mu is held.
func (p *Pacer) undo(r *commitRun) {
	p.own, p.events = r.own, p.events[:min(r.events, len(p.events))]
	p.restoreOwn(r.loaded)
	r.ran = false
}

// restoreOwn makes c p's model again. p.mu is held.
func (p *Pacer) restoreOwn(c ownCopy) {
	p.model, p.inFlight, p.unanswered = c.model, c.inFlight, c.unanswered
	p.pace = limiterAt(rate.Limit(c.pace.limit), c.pace.tokens, c.pace.at)
}
