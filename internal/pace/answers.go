package pace

import (
	"context"
	"math"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// What an answer says of the service's limit: Done's step, the gate's
// reading and the model's transition (hear), and the rates it measures.

// Done reports the answer to the request t let go, in four steps: the
// quota it announces, a pause it asks for, what it says of the rate the
// service accepts, and, for a request sent under the current curve, what
// it says of the pace.
func (p *Pacer) Done(t Ticket, a Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step(context.Background(), p.clock.Now(), queuedStep{op: func(now time.Time) { p.done(t, a, now) }})
	p.wake()
}

// done is Done's step: the gate reads the quota the answer announces, the
// model hears the rest, and the pace's tokens take what it did.
func (p *Pacer) done(t Ticket, a Answer, now time.Time) {
	p.own.Unanswered--
	p.unanswered--
	spent, crowded := p.gate.known && p.gate.quota.Remaining == 0, p.gate.crowded()
	quotas := p.gate.done(a.Quota, a.Refused, t.sent, now)
	p.quotaEvents(spent, crowded, now)
	p.tell(answered{t, a, quotas}, now)
}

// answered is the event of an answer to the request t let go: a, and
// whether the gate took a refusal for the announced quota's.
type answered struct {
	t      Ticket
	a      Answer
	quotas bool
}

// setting is what a transition reads beside the model: the pace's limit
// as the step began, and the Pacer's bounds.
type setting struct {
	pace, ceiling rate.Limit
	maxWait       time.Duration
}

// effect is what a transition asks of the pace's tokens, and tells.
type effect struct {
	takeBack bool       // the token earned at the rate refused is taken back (first)
	pace     rate.Limit // the limit set to the model's rate within the ceiling; 0, left alone
	events   []Event
}

// hear is next's answered case: it touches nothing but m, and reads no
// clock. The pause, what the service accepted and the refusals in a row
// take every answer; only an answer to a request sent under the current
// curve tells of the pace.
func (m *model) hear(e answered, now time.Time, s setting, out *effect) {
	t, a := e.t, e.a
	if a.Refused && a.RetryAfter > RoundingPause {
		if until := now.Add(min(a.RetryAfter, s.maxWait)); until.After(m.pausedTil) {
			if !m.pausedTil.After(now) {
				out.event("the service asked for a pause: every request waits", map[string]any{
					"retry_after_ms": a.RetryAfter.Milliseconds(), "until": until.Format(time.RFC3339Nano)})
			}
			m.pausedTil = until
		}
	}
	if !a.Refused && !a.Failed {
		// What the service accepts, whatever the pace was when it went.
		m.accepts = append(trimBefore(m.accepts, now.Add(-time.Second)), now)
	}
	if a.Refused && !e.quotas {
		// What a second admitted before a limit refused: what a window
		// admits in any second.
		m.mostAccepted = max(m.mostAccepted, m.acceptedInASecond(now))
	}
	current := t.cut == m.cut
	switch {
	case a.Failed:
	case !a.Refused:
		if current {
			m.accept(t, s, out)
		}
		m.refusedInARow = 0
	case e.quotas:
		// The announced quota's, which the gate obeys: no sign of a rate
		// the service does not tell.
	case current:
		m.refusedInARow++
		m.refuse(t, a, now, s, out)
	default:
		m.refusedInARow++
		m.rebase(now, s, out)
	}
}

func (e *effect) event(msg string, fields map[string]any) {
	e.events = append(e.events, Event{Message: msg, Fields: fields})
}

// repace ends a doubling that has reached Backoff of the rate refused (the
// cubic's time begins there) and sets the pace to the model's rate, within
// the ceiling.
func (m *model) repace(s setting, out *effect) rate.Limit {
	m.settle()
	out.pace = min(rate.Limit(m.rate()), s.ceiling)
	return out.pace
}

// quotaEvents tells what an answer changed of the announced quota: its
// window spent (requests wait for the reset), and its sharing with other
// runs begun or ended. spent and crowded are the gate's before it.
func (p *Pacer) quotaEvents(spent, crowded bool, now time.Time) {
	g := p.gate // read only
	if !spent && g.known && g.quota.Remaining == 0 && g.resetAt().After(now) {
		p.event("the announced quota is spent: requests wait for its reset", map[string]any{
			"limit": g.quota.Limit, "reset": g.resetAt().Format(time.RFC3339Nano), "reset_in_ms": g.resetAt().Sub(now).Milliseconds()})
	}
	switch {
	case !crowded && g.crowded():
		p.event("other runs spend the announced quota too: this run spends its share, spread until the reset",
			map[string]any{"share": math.Round(g.share*100) / 100, "remaining": g.quota.Remaining})
	case crowded && !g.crowded():
		p.event("this run spends the announced quota alone", map[string]any{"share": math.Round(g.share*100) / 100})
	}
}

// accept ends probing, and keeps the others in flight with t, for telling
// a limit in flight from a rate. A probe that ends a shut-out (refusals in
// a row) finds a limit that counts requests over a span: what a second
// admitted before it refused is what the pace grows back to, where less.
func (m *model) accept(t Ticket, s setting, out *effect) {
	switch ph := m.phase.(type) {
	case probing:
		if most := float64(m.mostAccepted); m.refusedInARow >= RefusedInARow && most > 0 && most < ph.refused {
			m.phase, m.grown = following{curve{refused: most, cutTo: min(float64(s.pace), Backoff*most)}, reopened}, 0
			out.event("a probe was accepted after a shut-out: probing ends, the pace growing back to what a second admitted",
				map[string]any{"pace_per_second": rateField(float64(m.repace(s, out))), "back_to_per_second": rateField(most)})
			break
		}
		m.phase = following{ph.curve, reopened}
		out.event("a probe was accepted: probing ends, at the pace before it", map[string]any{"pace_per_second": rateField(float64(s.pace))})
	case following:
		if ph.heard == nothingAccepted {
			m.phase = following{ph.curve, accepted}
		}
	case starting:
		m.phase = starting{accepted}
	}
	m.othersAccepted = append(m.othersAccepted, t.others)
	m.othersAccepted = m.othersAccepted[max(0, len(m.othersAccepted)-InFlightHistory):]
}

// refuse reads a refusal of t: a probe's, one of a limit in flight, or a
// rate's, which cuts the pace.
func (m *model) refuse(t Ticket, a Answer, now time.Time, s setting, out *effect) {
	switch ph := m.phase.(type) {
	case probing:
		if t.probe { // one sent before probing began says nothing of it
			m.probe(a, now, s, out)
		}
	case following:
		switch {
		case ph.heard == nothingAccepted:
			m.probe(a, now, s, out)
		case len(m.othersAccepted) >= InFlightEvidence && m.inFlightRefused(t.others):
			m.inFlightLimit = t.others
			// Its refusals, not a rate's, cut the pace: it starts again.
			m.phase, m.grown = starting{}, 0
			m.cut++
			out.event("the service limits the requests in flight: holding to that many, the pace starting again", map[string]any{
				"in_flight": m.inFlightLimit, "pace_per_second": rateField(float64(m.repace(s, out)))})
		default:
			m.cutPace(t, now, s, out)
		}
	default:
		m.cutPace(t, now, s, out)
	}
}

// probe is the package doc's probing. A gap is at least the pace's and
// ProbeShare of the Retry-After, and at most the Retry-After. A service
// that refuses for a while sees its refusals thin out, and one that
// accepts again is found within maxWait.
func (m *model) probe(a Answer, now time.Time, s setting, out *effect) {
	was, probed := m.phase.(probing)
	gap := max(2*was.gap, nanos(float64(time.Second)/float64(s.pace)), a.RetryAfter/ProbeShare, 1)
	if s.maxWait > 0 {
		gap = min(gap, s.maxWait)
	}
	if a.RetryAfter > 0 {
		gap = min(gap, a.RetryAfter)
	}
	c, _ := m.curve()
	m.phase = probing{c, gap, now.Add(gap)}
	if !probed {
		out.event("the service refuses every request since the cut: probing it one request at a time",
			map[string]any{"first_gap_ms": gap.Milliseconds()})
	}
}

// inFlightRefused tells whether a refusal of a request sent with others in
// flight is one of a limit in flight: more were in flight than with all but
// one accepted of late (one may count an answer on its way back), and some
// of those went beside another. Only after a cut: till then, few went with
// others only because the pace was low. And a request refused as the first
// to go beside another (sequential pages, then reads) went faster too: as
// much a rate's refusal, so the least limit learnt is two.
func (m *model) inFlightRefused(others int) bool {
	most := slices.Sorted(slices.Values(m.othersAccepted))[len(m.othersAccepted)-2]
	return most > 0 && others > most
}

// cutPace is the package doc's cut. A first request's gap of 0 is taken
// for the pace; one let go before its token is measured over RateSpan
// alone, as its gap is the pace's, not what the service saw. A second in
// which the service accepted nothing says nothing of its rate, and a rate
// of nothing would let every request go at once.
func (m *model) cutPace(t Ticket, now time.Time, s setting, out *effect) {
	measured, what := m.sentRate(s.pace), "the rate requests went at"
	if !t.beforeToken {
		measured = max(measured, 1/t.gap.Seconds())
	}
	from, start := float64(s.pace), m.doubling()
	if ph, ok := m.phase.(following); ok && ph.heard == reopened {
		switch n := m.acceptedRate(now); {
		case math.IsInf(n, 1):
			// No second has passed to measure: what went is no measure
			// either, as the shut-out held it back.
			measured, what = from, "the pace: less than a second has passed to measure what the service accepted"
		case n > 0:
			measured, what = n, "the rate the service accepted over the last second"
		}
	}
	refused := min(from, measured)
	m.phase, m.grown = following{curve{refused, Backoff * refused, start}, nothingAccepted}, 0
	m.cut++
	out.takeBack = true
	why := "a refusal: cut from the rate refused"
	if start {
		why = "a refusal while the pace doubled at the start: it starts again, lower"
	}
	out.event("the pace was cut", map[string]any{"why": why, "from_per_second": rateField(from),
		"to_per_second": rateField(float64(m.repace(s, out))), "measured_per_second": rateField(measured), "measured": what,
		"back_to_per_second": rateField(refused)})
}

// rebase is the package doc's re-base, on a refusal of a request sent
// before the last cut. Only the accepted rate of a whole second says what
// a span admits: none is known before a second has passed.
func (m *model) rebase(now time.Time, s setting, out *effect) {
	if m.refusedInARow < RefusedInARow {
		return
	}
	n, from := m.acceptedRate(now), float64(s.pace)
	if n <= 0 || math.IsInf(n, 1) || Backoff*n >= from {
		return
	}
	m.setCurve(curve{refused: n, cutTo: Backoff * n})
	m.grown = 0
	out.event("the pace was cut", map[string]any{"why": "refusals in a row: the service counts requests over a span, and admits what it accepted over the last second",
		"from_per_second": rateField(from), "to_per_second": rateField(float64(m.repace(s, out))), "measured_per_second": rateField(n),
		"measured": "the rate the service accepted over the last second"})
}

// acceptedRate is how many requests were accepted over the last second;
// unbounded before a second has passed since the first went.
func (m *model) acceptedRate(now time.Time) float64 {
	if now.Sub(m.first) < time.Second {
		return math.Inf(1)
	}
	return float64(m.acceptedInASecond(now))
}

// acceptedInASecond is how many requests were accepted over the second
// before now.
func (m *model) acceptedInASecond(now time.Time) int {
	i, _ := slices.BinarySearchFunc(m.accepts, now.Add(-time.Second), time.Time.Compare)
	return len(m.accepts) - i
}

// sentRate is the rate requests went at over the last RateSpan: the
// pace's own when fewer than two went.
func (m *model) sentRate(pace rate.Limit) float64 {
	n := len(m.sent)
	if n < 2 || !m.sent[n-1].After(m.sent[0]) {
		return float64(pace)
	}
	return float64(n-1) / m.sent[n-1].Sub(m.sent[0]).Seconds()
}

// trimBefore drops the times, in order, before cutoff.
func trimBefore(ts []time.Time, cutoff time.Time) []time.Time {
	i, _ := slices.BinarySearchFunc(ts, cutoff, time.Time.Compare)
	return append(ts[:0], ts[i:]...)
}
