package pace

import (
	"context"
	"math"
	"slices"
	"time"
)

// What an answer says of the service's limit: the four steps of Done, the
// cut and the re-base, and the rates they measure.

// Done reports the answer to the request t let go, in four steps: the
// quota it announces, a pause it asks for, what it says of the rate the
// service accepts, and, for a request sent since the last cut, what it
// says of the pace.
func (p *Pacer) Done(t Ticket, a Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step(context.Background(), p.clock.Now(), queuedStep{op: func(now time.Time) { p.done(t, a, now) }})
	p.wake()
}

// done is Done's step of the model.
func (p *Pacer) done(t Ticket, a Answer, now time.Time) {
	p.own.Unanswered--
	p.unanswered--
	spent, crowded := p.gate.known && p.gate.quota.Remaining == 0, p.gate.crowded()
	quotas := p.gate.done(a.Quota, a.Refused, t.sent, now)
	p.quotaEvents(spent, crowded, now)
	if a.Refused && a.RetryAfter > RoundingPause {
		if until := now.Add(min(a.RetryAfter, p.maxWait)); until.After(p.pausedTil) {
			if !p.pausedTil.After(now) {
				p.event("the service asked for a pause: every request waits", map[string]any{
					"retry_after_ms": a.RetryAfter.Milliseconds(), "until": until.Format(time.RFC3339Nano)})
			}
			p.pausedTil = until
		}
	}
	if !a.Refused && !a.Failed {
		// What the service accepts, whatever the pace was when it went.
		p.accepts = append(trimBefore(p.accepts, now.Add(-time.Second)), now)
	}
	if a.Refused && !quotas {
		// What a second admitted before a limit refused: what a window
		// admits in any second.
		p.mostAccepted = max(p.mostAccepted, p.acceptedInASecond(now))
	}
	sinceCut := t.cut == p.cut
	switch {
	case a.Failed:
	case !a.Refused:
		if sinceCut {
			p.accept(t, now)
		}
		p.refusedInARow = 0
	case quotas:
		// The announced quota's, which the gate obeys: no sign of a rate
		// the service does not tell.
	case sinceCut:
		p.refusedInARow++
		p.refuse(t, a, now)
	default:
		p.refusedInARow++
		p.rebase(now)
	}
}

// quotaEvents tells what an answer changed of the announced quota: its
// window spent (requests wait for the reset), and its sharing with other
// runs begun or ended. spent and crowded are the gate's before it.
func (p *Pacer) quotaEvents(spent, crowded bool, now time.Time) {
	g := &p.gate
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
func (p *Pacer) accept(t Ticket, now time.Time) {
	switch ph := p.phase.(type) {
	case probing:
		if m := float64(p.mostAccepted); p.refusedInARow >= RefusedInARow && m > 0 && m < ph.refused {
			p.phase, p.grown = following{curve{refused: m, cutTo: min(float64(p.pace.Limit()), Backoff*m)}, reopened}, 0
			p.setPace(now)
			p.event("a probe was accepted after a shut-out: probing ends, the pace growing back to what a second admitted",
				map[string]any{"pace_per_second": rateField(float64(p.pace.Limit())), "back_to_per_second": rateField(m)})
			break
		}
		p.phase = following{ph.curve, reopened}
		p.event("a probe was accepted: probing ends, at the pace before it", map[string]any{"pace_per_second": rateField(float64(p.pace.Limit()))})
	case following:
		if ph.heard == nothingAccepted {
			p.phase = following{ph.curve, accepted}
		}
	case starting:
		p.phase = starting{accepted}
	}
	p.othersAccepted = append(p.othersAccepted, t.others)
	p.othersAccepted = p.othersAccepted[max(0, len(p.othersAccepted)-InFlightHistory):]
}

// refuse reads a refusal of t: a probe's, one of a limit in flight, or a
// rate's, which cuts the pace.
func (p *Pacer) refuse(t Ticket, a Answer, now time.Time) {
	switch ph := p.phase.(type) {
	case probing:
		if t.probe { // one sent before probing began says nothing of it
			p.probe(a, now)
		}
	case following:
		switch {
		case ph.heard == nothingAccepted:
			p.probe(a, now)
		case len(p.othersAccepted) >= InFlightEvidence && p.inFlightRefused(t.others):
			p.inFlightLimit = t.others
			// Its refusals, not a rate's, cut the pace: it starts again.
			p.phase, p.grown = starting{}, 0
			p.cut++
			p.setPace(now)
			p.event("the service limits the requests in flight: holding to that many, the pace starting again", map[string]any{
				"in_flight": p.inFlightLimit, "pace_per_second": rateField(float64(p.pace.Limit()))})
		default:
			p.cutPace(t, now)
		}
	default:
		p.cutPace(t, now)
	}
}

// probe is the package doc's probing. A gap is at least the pace's and
// ProbeShare of the Retry-After, and at most the Retry-After. A service
// that refuses for a while sees its refusals thin out, and one that
// accepts again is found within maxWait.
func (p *Pacer) probe(a Answer, now time.Time) {
	was, probed := p.phase.(probing)
	gap := max(2*was.gap, nanos(float64(time.Second)/float64(p.pace.Limit())), a.RetryAfter/ProbeShare, 1)
	if p.maxWait > 0 {
		gap = min(gap, p.maxWait)
	}
	if a.RetryAfter > 0 {
		gap = min(gap, a.RetryAfter)
	}
	c, _ := p.curve()
	p.phase = probing{c, gap, now.Add(gap)}
	if !probed {
		p.event("the service refuses every request since the cut: probing it one request at a time",
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
func (p *Pacer) inFlightRefused(others int) bool {
	most := slices.Sorted(slices.Values(p.othersAccepted))[len(p.othersAccepted)-2]
	return most > 0 && others > most
}

// cutPace is the package doc's cut. A first request's gap of 0 is taken
// for the pace; one let go before its token is measured over RateSpan
// alone, as its gap is the pace's, not what the service saw. A second in
// which the service accepted nothing says nothing of its rate, and a rate
// of nothing would let every request go at once.
func (p *Pacer) cutPace(t Ticket, now time.Time) {
	measured, what := p.sentRate(), "the rate requests went at"
	if !t.beforeToken {
		measured = max(measured, 1/t.gap.Seconds())
	}
	from, start := float64(p.pace.Limit()), p.doubling()
	if ph, ok := p.phase.(following); ok && ph.heard == reopened {
		switch n := p.acceptedRate(now); {
		case math.IsInf(n, 1):
			// No second has passed to measure: what went is no measure
			// either, as the shut-out held it back.
			measured, what = from, "the pace: less than a second has passed to measure what the service accepted"
		case n > 0:
			measured, what = n, "the rate the service accepted over the last second"
		}
	}
	refused := min(from, measured)
	p.phase, p.grown = following{curve{refused, Backoff * refused, start}, nothingAccepted}, 0
	p.cut++
	p.pace = limiterAt(p.pace.Limit(), min(p.pace.TokensAt(now), 0), now)
	p.setPace(now)
	why := "a refusal: cut from the rate refused"
	if start {
		why = "a refusal while the pace doubled at the start: it starts again, lower"
	}
	p.event("the pace was cut", map[string]any{"why": why, "from_per_second": rateField(from),
		"to_per_second": rateField(float64(p.pace.Limit())), "measured_per_second": rateField(measured), "measured": what,
		"back_to_per_second": rateField(refused)})
}

// rebase is the package doc's re-base, on a refusal of a request sent
// before the last cut. Only the accepted rate of a whole second says what
// a span admits: none is known before a second has passed.
func (p *Pacer) rebase(now time.Time) {
	if p.refusedInARow < RefusedInARow {
		return
	}
	n, from := p.acceptedRate(now), float64(p.pace.Limit())
	if n <= 0 || math.IsInf(n, 1) || Backoff*n >= from {
		return
	}
	p.setCurve(curve{refused: n, cutTo: Backoff * n})
	p.grown = 0
	p.setPace(now)
	p.event("the pace was cut", map[string]any{"why": "refusals in a row: the service counts requests over a span, and admits what it accepted over the last second",
		"from_per_second": rateField(from), "to_per_second": rateField(float64(p.pace.Limit())), "measured_per_second": rateField(n),
		"measured": "the rate the service accepted over the last second"})
}

// acceptedRate is how many requests were accepted over the last second;
// unbounded before a second has passed since the first went.
func (p *Pacer) acceptedRate(now time.Time) float64 {
	if now.Sub(p.first) < time.Second {
		return math.Inf(1)
	}
	return float64(p.acceptedInASecond(now))
}

// acceptedInASecond is how many requests were accepted over the second
// before now.
func (p *Pacer) acceptedInASecond(now time.Time) int {
	i, _ := slices.BinarySearchFunc(p.accepts, now.Add(-time.Second), time.Time.Compare)
	return len(p.accepts) - i
}

// sentRate is the rate requests went at over the last RateSpan: the
// pace's own when fewer than two went.
func (p *Pacer) sentRate() float64 {
	n := len(p.sent)
	if n < 2 || !p.sent[n-1].After(p.sent[0]) {
		return float64(p.pace.Limit())
	}
	return float64(n-1) / p.sent[n-1].Sub(p.sent[0]).Seconds()
}

// trimBefore drops the times, in order, before cutoff.
func trimBefore(ts []time.Time, cutoff time.Time) []time.Time {
	i, _ := slices.BinarySearchFunc(ts, cutoff, time.Time.Compare)
	return append(ts[:0], ts[i:]...)
}
