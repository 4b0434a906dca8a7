package pace

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/ratelimit"
)

// After a cut, a refusal of a request sent with more others in flight than
// all but one of those accepted since holds the pacer to that many in
// flight, and starts its pace afresh.
func TestPacer_inFlightLimit(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 0, time.Minute)
	// Requests go a second apart, so that only the others in flight hold
	// them back.
	send := func(n int) []Ticket { return sendApart(t, p, clock, n, time.Second) }
	answer := func(tk Ticket, refused bool) {
		p.Done(tk, Answer{Refused: refused})
		p.Release(tk)
	}
	answer(send(1)[0], true) // a cut
	// Accepted with one other in flight, and once with two (an answer on
	// its way back counts as in flight).
	for i := range InFlightEvidence {
		for _, tk := range send(2 + i/(InFlightEvidence-1)) {
			answer(tk, false)
		}
	}
	tickets := send(3)
	answer(tickets[2], true)
	// The cut was that limit's, not a rate's: the pace starts afresh.
	fresh := func(when string) {
		t.Helper()
		if got := float64(p.pace.Limit()); got != StartRate || p.phase.phaseName() != "starting" {
			t.Errorf("%s, the pace is %.2f a second (%s, the rate refused %v); want %v, starting", when, got, p.phase.phaseName(), refusedRate(&p.model), float64(StartRate))
		}
	}
	fresh("after the limit in flight was learnt")
	// The others, sent before the fresh start, say nothing of it: not
	// refused (a rate's cut), nor accepted (news that the service accepts).
	answer(tickets[1], true)
	fresh("after a request sent before the fresh start was refused")
	if heardOf(&p.model) != nothingAccepted || len(p.othersAccepted) != InFlightHistory {
		t.Errorf("a straggler's answer was news of the fresh pace: heard %v, %d accepted kept", heardOf(&p.model), len(p.othersAccepted))
	}
	answer(tickets[0], false)
	if heardOf(&p.model) != nothingAccepted || len(p.othersAccepted) != InFlightHistory {
		t.Errorf("a straggler's acceptance was news of the fresh pace: heard %v, %d accepted kept", heardOf(&p.model), len(p.othersAccepted))
	}
	send(2)
	clock.now = clock.now.Add(time.Second)
	if _, _, ok := p.reserveOK(clock.now); ok {
		t.Error("three let go at once after a refusal with two others in flight; want two")
	}
}

// A refusal of the first request sent beside another, after requests that
// each went alone were accepted (a list's pages, one after another, then
// reads at once), says as much of a rate as of a limit in flight: it cuts
// the pace, and holds the Pacer to no number in flight.
func TestPacer_inFlightLimitNeedsOthersAccepted(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 0, time.Minute)
	answer := func(tk Ticket, refused bool) {
		p.Done(tk, Answer{Refused: refused})
		p.Release(tk)
	}
	answer(sendApart(t, p, clock, 1, time.Second)[0], true) // a cut
	for range InFlightEvidence {
		answer(sendApart(t, p, clock, 1, time.Second)[0], false)
	}
	refused := refusedRate(&p.model)
	tickets := sendApart(t, p, clock, 2, time.Second)
	answer(tickets[1], true)
	if p.inFlightLimit != 0 {
		t.Errorf("held to %d in flight after a refusal of the first request sent beside another; want no limit in flight", p.inFlightLimit)
	}
	if refusedRate(&p.model) == 0 || p.cut != 2 {
		t.Errorf("the rate refused is %v at curve %d after a refusal (%v before); want a rate's cut, the second curve", refusedRate(&p.model), p.cut, refused)
	}
}

// sendApart lets n requests go, gap apart, each at once.
func sendApart(t *testing.T, p *Pacer, clock *fakeClock, n int, gap time.Duration) []Ticket {
	t.Helper()
	var tickets []Ticket
	for range n {
		clock.now = clock.now.Add(gap)
		tk, _, ok := p.reserveOK(clock.now)
		if !ok {
			t.Fatalf("a request %v after the last waits", gap)
		}
		tickets = append(tickets, tk)
	}
	return tickets
}

// A service that refuses everything after a cut is probed one request at a
// time, each refused probe doubling the gap; the refusals of requests
// already in flight when probing began do not.
func TestPacer_probes(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 0, time.Minute)
	refuse := func(tk Ticket) {
		p.Done(tk, Answer{Refused: true, RetryAfter: time.Second})
		p.Release(tk)
	}
	tk, _, _ := p.reserveOK(clock.now)
	clock.now = clock.now.Add(time.Second)
	refuse(tk) // the cut
	inFlight := sendApart(t, p, clock, 3, 100*time.Millisecond)
	clock.now = clock.now.Add(100 * time.Millisecond)
	for _, tk := range inFlight {
		refuse(tk)
	}
	first := time.Second / ProbeShare
	for _, gap := range []time.Duration{first, 2 * first} {
		if _, wait, ok := p.reserveOK(clock.now); ok || wait != gap {
			t.Fatalf("let go %v, wait %v; want a probe after %v", ok, wait, gap)
		}
		clock.now = clock.now.Add(gap)
		probe, _, ok := p.reserveOK(clock.now)
		if !ok {
			t.Fatalf("no probe after %v", gap)
		}
		if _, _, ok := p.reserveOK(clock.now); ok {
			t.Fatal("a second request went with a probe in flight")
		}
		refuse(probe)
	}
}

// Refusals without a Retry-After come back at once (the client's retry
// model), so the probe's gaps are what spaces them: they double up to
// maxWait and stay there.
func TestPacer_probeGapsStopAtMaxWait(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	const maxWait = 2 * time.Second
	p := New(clock, 8, 0, maxWait)
	tk := sendApart(t, p, clock, 1, 0)[0]
	p.Done(tk, Answer{Refused: true}) // the cut
	p.Release(tk)
	var gaps []time.Duration
	for range 20 {
		refused := clock.now
		for {
			var wait time.Duration
			var ok bool
			if tk, wait, ok = p.reserveOK(clock.now); ok {
				break
			}
			clock.now = clock.now.Add(wait)
		}
		gaps = append(gaps, clock.now.Sub(refused))
		if gaps[len(gaps)-1] > maxWait {
			t.Fatalf("gaps %v: past max_wait %v", gaps, maxWait)
		}
		p.Done(tk, Answer{Refused: true})
		p.Release(tk)
	}
	if last := gaps[len(gaps)-1]; last != maxWait {
		t.Errorf("gaps %v; want them to reach max_wait %v and stay", gaps, maxWait)
	}
}

// RefusedInARow refusals in a row, the last of a request sent before the
// cut, re-base the pace at Backoff of what the service accepted over the
// last second: a window counts requests over a span. An acceptance among
// them says a limit that refuses one here and there, and the cut stands.
func TestPacer_refusalsInARowRebaseThePace(t *testing.T) {
	for _, c := range []struct {
		name    string
		refused []bool // the answers to the three sent before the cut, and one more
		rebased bool
	}{
		{"three in a row", []bool{true, true}, true},
		{"two in a row", []bool{true}, false},
		{"an acceptance among them", []bool{false, true, true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
			p := New(clock, 8, 0, time.Minute)
			for range 21 { // some 20 accepted over the last second
				tk := sendApart(t, p, clock, 1, 50*time.Millisecond)[0]
				p.Done(tk, Answer{})
				p.Release(tk)
			}
			inFlight := sendApart(t, p, clock, len(c.refused)+1, 10*time.Millisecond)
			clock.now = clock.now.Add(80 * time.Millisecond)
			p.Done(inFlight[0], Answer{Refused: true}) // the cut
			cut, accepted := float64(p.pace.Limit()), p.acceptedRate(clock.now)
			if Backoff*accepted >= cut {
				t.Fatalf("the cut left the pace at %v, under Backoff of the %v accepted: the test shows nothing", cut, accepted)
			}
			for i, refused := range c.refused {
				p.Done(inFlight[i+1], Answer{Refused: refused})
			}
			want := cut
			if c.rebased {
				want = Backoff * accepted
			}
			if got := float64(p.pace.Limit()); math.Abs(got-want) > 1e-9 {
				t.Errorf("pace %v after the cut to %v: want %v (%v accepted over the last second)", got, cut, want, accepted)
			}
		})
	}
}

// The rate the service accepted counts every acceptance, those of requests
// sent before the last cut too: it is the service's, not the pace's.
func TestPacer_acceptedRate(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 0, time.Minute)
	first := sendApart(t, p, clock, 1, 0)[0]
	p.Done(first, Answer{}) // it goes alone: its answer says whether a quota is announced
	p.Release(first)
	for i, tk := range sendApart(t, p, clock, 3, 400*time.Millisecond) {
		p.Done(tk, Answer{Refused: i == 0}) // a cut, with two sent before it still to answer
		p.Release(tk)
	}
	if got := p.acceptedRate(clock.now); got != 2 {
		t.Errorf("accepted over the last second: %v, want 2", got)
	}
}

// TestPacer_trajectoryAfterARefusal pins the pace, step by step, after the
// first refusal, with requests always waiting for it (each step lets one
// go, and the next asks at once): the start resumes at FirstBackoff of the
// rate refused (100, the StartRate it went at) and doubles every
// StartDoubling until Backoff of it; there the cubic's time begins, and the
// pace is back at the rate refused after Recover, growing past it after.
func TestPacer_trajectoryAfterARefusal(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := defaultPacer(clock)
	cut := clock.now
	first, _, ok := p.reserveOK(cut)
	if !ok {
		t.Fatal("the first request waited")
	}
	p.Done(first, Answer{Refused: true})
	p.Release(first)

	cubic := func(grown float64) float64 { return 100 * (1 + (1-Backoff)*math.Pow(grown/Recover.Seconds()-1, 3)) }
	want := map[time.Duration]float64{
		0:                       50,              // FirstBackoff of 100
		50 * time.Millisecond:   50 * math.Sqrt2, // doubling every 100 ms
		100 * time.Millisecond:  80,              // past Backoff of 100: the cubic's time begins
		150 * time.Millisecond:  cubic(0.05),     // 80.98
		1100 * time.Millisecond: cubic(1),        // 94.07
		2100 * time.Millisecond: cubic(2),        // 99.26
		3100 * time.Millisecond: 100,             // Recover after the start's end
		4100 * time.Millisecond: cubic(4),        // 100.74: probing past the rate refused
	}
	for at := time.Duration(0); at <= 4100*time.Millisecond; at += 50 * time.Millisecond {
		now := cut.Add(at)
		clock.now = now
		var paceAt float64
		for i := 0; ; i++ {
			tk, _, ok := p.reserveOK(now)
			if i == 0 {
				paceAt = float64(p.pace.Limit())
			}
			if !ok {
				break
			}
			p.Done(tk, Answer{})
			p.Release(tk)
		}
		if w, pinned := want[at]; pinned && math.Abs(paceAt-w) > 1e-9 {
			t.Errorf("%v after the refusal: pace %.6f, want %.6f", at, paceAt, w)
		}
	}
}

// A refusal announcing nothing remaining of the quota the gate obeys was
// the quota's, spent by others beside this Pacer: the gate holds requests
// until its reset, and the pace, which stands for a rate the service does
// not tell, is left as it was; so is one of the window before, answered
// late. Any other refusal cuts it: one with some of the quota remaining (a
// second limit, as GitHub's secondary ones), one of a later window (a
// longer quota) or of another limit, one announcing nothing, or one of a
// request sent once the reset had come by this Pacer's clock: the gate has
// no reset to hold requests until, and the pace spaces them.
func TestPacer_aRefusalOfTheSpentQuotaLeavesThePace(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	reset := start.Add(2 * time.Second)
	quotaOf := func(limit, remaining int, reset time.Time) http.Header {
		h := http.Header{}
		(&ratelimit.Quota{Limit: limit}).Announce(h, "github", start, remaining, reset)
		return h
	}
	quota := func(remaining int, reset time.Time) http.Header { return quotaOf(100, remaining, reset) }
	for _, c := range []struct {
		name          string
		refusal       http.Header
		sent          time.Duration // after the first answer
		quotas, holds bool
	}{
		{"the quota spent", quota(0, reset), 100 * time.Millisecond, true, true},
		{"some of the quota remaining", quota(30, reset), 100 * time.Millisecond, false, false},
		{"the window before spent", quota(0, reset.Add(-2*time.Second)), 100 * time.Millisecond, true, false},
		{"a later window spent", quota(0, reset.Add(time.Hour)), 100 * time.Millisecond, false, false},
		{"an earlier window of another limit spent", quotaOf(10, 0, reset.Add(-time.Second)), 100 * time.Millisecond, false, false},
		{"nothing announced", nil, 100 * time.Millisecond, false, false},
		{"the quota spent past its reset", quota(0, reset), 2100 * time.Millisecond, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeClock{now: start}
			p := New(clock, 8, 0, time.Minute)
			tk, _, _ := p.reserveOK(clock.now)
			p.Done(tk, Answer{Quota: quota(60, reset)})
			p.Release(tk)
			clock.now = clock.now.Add(c.sent)
			tk, _, _ = p.reserveOK(clock.now)
			before := p.pace.Limit()
			p.Done(tk, Answer{Refused: true, Quota: c.refusal})
			p.Release(tk)
			if cut := p.pace.Limit() < before; cut == c.quotas {
				t.Errorf("pace %.0f before the refusal, %.0f after: want it cut %v", before, p.pace.Limit(), !c.quotas)
			}
			now := clock.now.Add(time.Second)
			if _, wait, _ := p.reserveOK(now); c.holds && wait != reset.Add(resetMargin).Sub(now) {
				t.Errorf("a second after the refusal: held %v; want until the reset, %v", wait, reset.Add(resetMargin).Sub(now))
			}
			if told := eventSaying(p, "quota is spent"); c.holds != (told != "") {
				t.Errorf("told %q: want the quota's spending told %v", told, c.holds)
			}
		})
	}
}

// After probing, a refusal cuts the pace to the rate the service accepted
// over the last second. When it accepted none in that second (the probe's
// acceptance came longer ago), the cut measures the rate requests went at,
// as before probing, not nothing: a pace of nothing let every request go
// at once, each refused, and none of their refusals could cut it again, as
// none was sent after the cut.
func TestPacer_aCutAfterProbingNeverStopsThePace(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 0, time.Minute)
	send := func(refused bool) { sendWhenLet(p, clock, refused) }
	send(false)
	clock.now = clock.now.Add(2 * time.Second)
	send(true)  // cuts the pace
	send(true)  // nothing sent since the cut accepted: probing
	send(false) // the probe, accepted, ends probing
	clock.now = clock.now.Add(1500 * time.Millisecond)
	send(true) // cuts it again, from the rate accepted
	if r := float64(p.pace.Limit()); !(r > 0) || math.IsInf(r, 0) {
		t.Fatalf("the pace after the cut: %v a second", r)
	}
	if _, wait, ok := p.reserveOK(clock.now); ok || wait <= 0 {
		t.Errorf("a request after the cut let go at once (wait %v): want it held to the pace", wait)
	}
}

// After probing, the cut measures the second the shut-out ended in: the
// pace is cut to Backoff of what the service accepted over it, and grows
// back to that, not to what a second admitted before the shut-out (40
// here), which only a shut-out's refusals in a row make its target.
func TestPacer_aCutAfterProbingMeasuresWhatTheServiceAccepted(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 0, time.Minute)
	send := func(refused bool) { sendWhenLet(p, clock, refused) }
	for range 40 {
		clock.now = clock.now.Add(20 * time.Millisecond)
		send(false)
	}
	send(true) // the cut
	send(true) // nothing accepted since: probing
	clock.now = clock.now.Add(2 * time.Second)
	for range 5 {
		send(false) // the probe, and four more: 5 in the last second
	}
	send(true) // cut from the second the shut-out ended in
	if got, want := float64(p.pace.Limit()), Backoff*5; math.Abs(got-want) > 1e-9 {
		t.Errorf("cut to %v a second: want %v, Backoff of the 5 accepted over the last second", got, want)
	}
	if got := refusedRate(&p.model); got != 5 {
		t.Errorf("the pace grows back to %v a second: want 5", got)
	}
}

// A probe accepted after RefusedInARow refusals in a row ends a shut-out:
// the limit counts requests over a span, and the pace grows back to what
// a second admitted before it refused, not to the rate the start went at.
// Fewer refusals say nothing of a span, and leave the rate refused.
func TestPacer_aShutOutGrowsBackToWhatASecondAdmitted(t *testing.T) {
	for _, c := range []struct {
		name    string
		refused int // in a row, the probe's first among them
		backTo  float64
	}{
		{"a shut-out", RefusedInARow, 40},
		{"one refusal then the probe's", RefusedInARow - 1, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
			p := New(clock, 8, 0, time.Minute)
			send := func(refused bool) { sendWhenLet(p, clock, refused) }
			for range 40 { // at 100 a second, all accepted
				clock.now = clock.now.Add(10 * time.Millisecond)
				send(false)
			}
			for range c.refused {
				send(true) // the cut, then probes refused
			}
			if refusedRate(&p.model) != 100 || p.mostAccepted != 40 {
				t.Fatalf("the cut took %v a second for the rate refused, and %d for what a second admitted: the test shows nothing", refusedRate(&p.model), p.mostAccepted)
			}
			send(false) // a probe accepted
			if got := refusedRate(&p.model); got != c.backTo {
				t.Errorf("the pace grows back to %v a second: want %v", got, c.backTo)
			}
			if p.grown = Recover; !p.doubling() && p.rate() != refusedRate(&p.model) {
				t.Errorf("after Recover the pace is %v a second: want %v", p.rate(), refusedRate(&p.model))
			}
		})
	}
}

// sendWhenLet sends one request as soon as p lets it go, moving clock on
// to then, and answers it.
func sendWhenLet(p *Pacer, clock *fakeClock, refused bool) {
	tk, wait, ok := p.reserveOK(clock.now)
	for ; !ok; tk, wait, ok = p.reserveOK(clock.now) {
		clock.now = clock.now.Add(wait)
	}
	p.Done(tk, Answer{Refused: refused})
	p.Release(tk)
}
