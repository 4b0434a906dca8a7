package pace

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// This file is the baseline the model for limits nobody announces is
// judged against: the AWS SDKs' adaptive retry mode as aws-sdk-go-v2's
// retry package publishes it (adaptive_ratelimit.go), inside today's gate
// and probe, with each of today's rules that rules turns on. The model:
// no limit until the first throttle; then a token bucket (as deep as a
// second of its rate) whose rate is cut at each throttle to beta of the
// rate measured (responses a second over half-second buckets, smoothed),
// and regrows at each success along CUBIC's cubic (C = 0.4) back to that
// rate, never over twice the rate measured.

// The AWS model's constants, as published.
const (
	awsSmooth  = 0.8
	awsBeta    = 0.7
	awsC       = 0.4
	awsMinFill = 0.5
)

// rules are today's rules for limits nobody announces, each of which the
// baseline can take on (package doc):
//   - start: before the first refusal, a pace doubling from StartRate
//     every StartDoubling, not none (today's start also starts again,
//     lower, at a refusal during it: not modelled here);
//   - gapFloor: a cut measures at least the rate of the refused request's
//     gap to the one before it;
//   - fresh: only a refusal of a request sent after the last cut cuts
//     again (the baseline cuts at every refusal);
//   - accepted: after probing, a cut measures the rate the service
//     accepted over the last second;
//   - inFlight: a refusal with more in flight than all but one of the
//     last accepted learns a limit on requests in flight;
//
// and the ways today's rate itself differs from AWS's:
//   - sentRate: a cut measures the rate requests went at over RateSpan
//     (the bucket's rate when fewer than two went), not the responses a
//     second smoothed over half-seconds;
//   - cubic: a cut to Backoff of it, regrown along a cubic that reaches
//     it again after Recover (today's counts only time requests waited;
//     here, all time), not to beta with AWS's C; it scales with the rate
//     cut, so it goes with sentRate: AWS's measure is nothing before its
//     first half-second, and the cubic would never grow from there;
//   - noCap: the rate is not held to twice the rate measured;
//   - burst1: the bucket holds one token, not a second of its rate;
//   - grow: the start's doubling and the cubic count only the time
//     requests waited for the pace, and move as requests ask, not only
//     at answers;
//   - restart: a refusal during the start starts it again, from
//     FirstBackoff of the rate refused up to Backoff of it, where the
//     cubic begins;
//   - rebase: RefusedInARow refusals in a row, the last of a request sent
//     before the cut, re-base the rate to Backoff of the rate the service
//     accepted over the last second, if lower (with fresh: without it,
//     such a refusal cuts);
//   - shutOut: a probe accepted after RefusedInARow refusals in a row
//     restarts the cubic, back to the most the service accepted in a
//     second before a refusal if less than where it was going, from
//     Backoff of it or the pace, the lower (with cubic).
type rules struct {
	start, gapFloor, fresh, accepted, inFlight, sentRate, cubic, noCap, burst1, grow, restart, rebase, shutOut bool
}

// all is every rule: the baseline made as near today's Pacer as the rules
// go.
var all = rules{true, true, true, true, true, true, true, true, true, true, true, true, true}

// adaptive is the baseline, a simPacer.
type adaptive struct {
	r             rules
	clock         Clock
	maxConcurrent int
	maxWait       time.Duration
	gate          gate
	inFlight      int
	unanswered    int

	// AWS's rate: off until the first throttle.
	enabled      bool
	fill         float64 // the bucket's rate
	tokens       float64
	refilled     time.Time
	measured     float64 // responses a second, smoothed
	bucket       float64 // the half-second being counted, in Unix seconds
	count        float64 // responses in it
	lastMax      float64 // the rate at the last throttle
	cutTo        float64 // cubic: where it began, Backoff of lastMax but with shutOut
	lastThrottle time.Time

	// Today's probe and pause.
	cut, accepted, probed bool
	lastCut               time.Time
	probeGap              time.Duration
	probeAt, pausedTil    time.Time

	// The rules' own state.
	startBase float64   // start: the pace it began at
	startEnd  float64   // and the pace that ends it; 0 out of a start
	startAt   time.Time // and when it began (zero: at the first request)
	grown     time.Duration
	polled    time.Time   // grow: when a request last asked
	held      bool        // and the pace held it back
	sent      []time.Time // sentRate: when requests went, over RateSpan
	lastSent  time.Time   // gapFloor: when the last request went
	acks      []time.Time // accepted: acceptances over the last second
	window    int         // inFlight: the limit learnt
	mostOK    []int       // inFlight: others in flight with the last accepted
	first     time.Time   // rebase: when the first request went
	inARow    int         // rebase: refusals since the last acceptance
	most      int         // shutOut: the most accepted in the second before a refusal
}

func newAdaptive(c Clock, r rules) *adaptive {
	now := c.Now()
	a := &adaptive{r: r, clock: c, maxConcurrent: 8, maxWait: 30 * time.Second,
		bucket: math.Floor(unixSeconds(now))}
	if r.start {
		a.startBase, a.startEnd = StartRate, math.Inf(1)
	}
	return a
}

// startRate is the start's pace: its base, doubled every StartDoubling of
// its time (with grow, of the time requests waited).
func (a *adaptive) startRate(now time.Time) float64 {
	d := now.Sub(a.startAt)
	if a.r.grow {
		d = a.grown
	}
	return a.startBase * math.Exp2(float64(d)/float64(StartDoubling))
}

// regrow moves the rate as requests ask (grow): a start that reached its
// end ends there, where the cubic begins; the cubic follows the time
// grown.
func (a *adaptive) regrow(now time.Time) {
	switch {
	case a.startEnd > 0 && !math.IsInf(a.startEnd, 1) && a.startRate(now) >= a.startEnd:
		a.enabled, a.grown, a.lastThrottle, a.cutTo = true, 0, now, a.startEnd
		a.setRate(now, a.startEnd)
		a.startEnd = 0
	case a.startEnd == 0 && a.enabled && a.r.cubic:
		a.setRate(now, a.cubicRate(now))
	}
}

// cubicRate is today's cubic: back to the rate cut from after Recover of
// its time (with grow, of the time requests waited).
func (a *adaptive) cubicRate(now time.Time) float64 {
	d := now.Sub(a.lastThrottle)
	if a.r.grow {
		d = a.grown
	}
	x := d.Seconds()/Recover.Seconds() - 1
	return a.lastMax + (a.lastMax-a.cutTo)*x*x*x
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / float64(time.Second) }

func (a *adaptive) sharesPace() bool                           { return false }
func (a *adaptive) pollAfter(wait time.Duration) time.Duration { return wait }
func (a *adaptive) answersWake() bool                          { return true }
func (a *adaptive) Release(Ticket)                             { a.inFlight-- }

func (a *adaptive) askOK(_ context.Context, now time.Time) (Ticket, time.Duration, bool) {
	switch {
	case a.window > 0 && a.inFlight >= a.window, a.maxConcurrent > 0 && a.inFlight >= a.maxConcurrent:
		return Ticket{}, untilAnswered, false
	case now.Before(a.pausedTil):
		return Ticket{}, a.pausedTil.Sub(now), false
	case a.probeGap > 0 && a.inFlight > 0:
		return Ticket{}, untilAnswered, false
	case a.probeGap > 0 && now.Before(a.probeAt):
		return Ticket{}, a.probeAt.Sub(now), false
	}
	if a.startAt.IsZero() {
		a.startAt, a.first = now, now
	}
	if a.r.grow {
		if a.held && a.polled.Before(now) {
			a.grown += now.Sub(a.polled)
			a.regrow(now)
		}
		a.polled, a.held = now, false
	}
	switch {
	case a.startEnd > 0:
		if pace := a.startRate(now); !a.lastSent.IsZero() {
			if next := a.lastSent.Add(nanos(float64(time.Second) / pace)); now.Before(next) {
				a.held = true
				return Ticket{}, next.Sub(now), false
			}
		}
	case a.enabled:
		a.refill(now)
		if a.tokens < 1 {
			a.held = true
			return Ticket{}, nanos(math.Ceil((1 - a.tokens) / a.fill * float64(time.Second))), false
		}
	}
	if wait := a.gate.reserve(now, a.unanswered, a.maxWait); wait > 0 {
		return Ticket{}, wait, false
	}
	if a.enabled {
		a.tokens--
	}
	t := Ticket{sent: now, others: a.inFlight}
	if !a.lastSent.IsZero() {
		t.gap = now.Sub(a.lastSent)
	}
	a.lastSent = now
	a.sent = append(trimBefore(a.sent, now.Add(-RateSpan)), now)
	a.inFlight++
	a.unanswered++
	return t, 0, true
}

// refill adds the tokens of the time since the last refill, up to the
// bucket's depth.
func (a *adaptive) refill(now time.Time) {
	if !a.refilled.IsZero() {
		a.tokens = min(a.tokens+now.Sub(a.refilled).Seconds()*a.fill, a.depth())
	}
	a.refilled = now
}

// depth is the bucket's: a second of its rate, at least one; one with
// burst1.
func (a *adaptive) depth() float64 {
	if a.r.burst1 {
		return 1
	}
	return max(a.fill, 1)
}

func (a *adaptive) Done(t Ticket, ans Answer) {
	now := a.clock.Now()
	a.unanswered--
	quotas := a.gate.done(ans.Quota, ans.Refused, t.sent, now)
	if ans.Refused && ans.RetryAfter > RoundingPause {
		if until := now.Add(min(ans.RetryAfter, a.maxWait)); until.After(a.pausedTil) {
			a.pausedTil = until
		}
	}
	if ans.Failed {
		return
	}
	a.measure(now)
	if ans.Refused && !quotas {
		a.inARow++
		a.most = max(a.most, int(a.acceptedRate(now)))
	}
	sinceCut := t.sent.After(a.lastCut) || !a.cut
	switch {
	case !ans.Refused:
		if a.r.shutOut && a.r.cubic && sinceCut && a.probeGap > 0 && a.inARow >= RefusedInARow {
			a.backToMost(now)
		}
		a.inARow = 0
		a.acks = append(trimBefore(a.acks, now.Add(-time.Second)), now)
		if sinceCut {
			a.accepted, a.probeGap = true, 0
			a.mostOK = append(a.mostOK, t.others)
			a.mostOK = a.mostOK[max(0, len(a.mostOK)-InFlightHistory):]
		}
		a.success(now)
	case quotas:
	case a.cut && !a.accepted && sinceCut:
		a.probe(ans, now)
	case !sinceCut && a.r.fresh:
		if a.r.rebase {
			a.rebase(now)
		}
	case a.r.inFlight && sinceCut && a.cut && len(a.mostOK) >= InFlightEvidence &&
		t.others > slices.Sorted(slices.Values(a.mostOK))[len(a.mostOK)-2]:
		// The refusals were the limit in flight's: the rate starts again,
		// as the Pacer's does.
		a.window, a.enabled = t.others, false
		if a.r.start {
			a.startBase, a.startEnd, a.startAt, a.grown = StartRate, math.Inf(1), now, 0
		}
	default:
		a.throttle(t, now)
	}
}

// measure counts a response, and smooths the rate of the half-second
// that ended, as AWS's updateMeasuredRate does.
func (a *adaptive) measure(now time.Time) {
	bucket := math.Floor(unixSeconds(now)*2) / 2
	a.count++
	if bucket > a.bucket {
		a.measured = a.count/(bucket-a.bucket)*awsSmooth + a.measured*(1-awsSmooth)
		a.count, a.bucket = 0, bucket
	}
}

// throttle cuts the rate to beta of the rate measured (or of the bucket's,
// if lower), with the rules' measures.
func (a *adaptive) throttle(t Ticket, now time.Time) {
	rate := a.measured
	if a.r.sentRate {
		if n := len(a.sent); n >= 2 && a.sent[n-1].After(a.sent[0]) {
			rate = float64(n-1) / a.sent[n-1].Sub(a.sent[0]).Seconds()
		} else if a.enabled {
			rate = a.fill
		}
	}
	if a.r.gapFloor && t.gap > 0 {
		rate = max(rate, 1/t.gap.Seconds())
	}
	if a.r.accepted && a.probed {
		if n := a.acceptedRate(now); n > 0 {
			rate = n
		}
	}
	switch {
	case a.enabled:
		rate = min(rate, a.fill)
	case a.startEnd > 0 && a.r.restart:
		rate = min(rate, a.startRate(now)) // the pace refused, as the bucket's is
	}
	a.lastMax, a.lastThrottle, a.grown, a.cutTo = rate, now, 0, Backoff*rate
	a.cut, a.lastCut, a.accepted, a.probed = true, now, false, false
	if a.startEnd > 0 && a.r.restart {
		// The start begins again, lower; the bucket stays off.
		a.startBase, a.startEnd, a.startAt = FirstBackoff*rate, Backoff*rate, now
		return
	}
	a.enabled, a.startEnd = true, 0
	if a.r.cubic {
		a.setRate(now, rate*Backoff)
		return
	}
	a.setRate(now, rate*awsBeta)
}

// rebase is the rebase rule: the rate re-based to Backoff of the rate the
// service accepted over the last second, once a second has passed.
func (a *adaptive) rebase(now time.Time) {
	n := a.acceptedRate(now)
	if a.inARow < RefusedInARow || now.Sub(a.first) < time.Second || n <= 0 || Backoff*n >= a.pace(now) {
		return
	}
	a.lastMax, a.lastThrottle, a.grown, a.cutTo = n, now, 0, Backoff*n
	a.enabled, a.startEnd = true, 0
	if a.r.cubic {
		a.setRate(now, n*Backoff)
		return
	}
	a.setRate(now, n*awsBeta)
}

// backToMost is the shutOut rule.
func (a *adaptive) backToMost(now time.Time) {
	m := float64(a.most)
	if m <= 0 || m >= a.lastMax {
		return
	}
	a.lastMax, a.lastThrottle, a.grown, a.cutTo = m, now, 0, min(a.pace(now), Backoff*m)
	a.enabled, a.startEnd = true, 0
	a.setRate(now, a.cutTo)
}

// success regrows the rate along the cubic from the last throttle.
func (a *adaptive) success(now time.Time) {
	dt := now.Sub(a.lastThrottle).Seconds()
	if a.r.cubic {
		if a.enabled && a.startEnd == 0 {
			a.setRate(now, a.cubicRate(now))
		}
		return
	}
	x := dt - math.Cbrt(a.lastMax*(1-awsBeta)/awsC)
	a.setRate(now, awsC*x*x*x+a.lastMax)
}

// setRate is AWS's tokenBucketUpdateRate, the new rate held to twice the
// rate measured (but with noCap).
func (a *adaptive) setRate(now time.Time, calculated float64) {
	rate := calculated
	if !a.r.noCap {
		rate = min(rate, 2*a.measured)
	}
	a.refill(now)
	a.fill = max(rate, awsMinFill)
	a.tokens = min(a.tokens, a.depth())
}

// probe is today's: one request at a time, each gap double the last.
func (a *adaptive) probe(ans Answer, now time.Time) {
	a.probeGap = max(2*a.probeGap, nanos(float64(time.Second)/a.pace(now)), ans.RetryAfter/ProbeShare)
	a.probeGap = min(a.probeGap, a.maxWait)
	if ans.RetryAfter > 0 {
		a.probeGap = min(a.probeGap, ans.RetryAfter)
	}
	a.probeAt, a.probed = now.Add(a.probeGap), true
}

// pace is the rate requests go at now: the start's, the bucket's, or
// none (infinite).
func (a *adaptive) pace(now time.Time) float64 {
	switch {
	case a.startEnd > 0:
		return a.startRate(now)
	case a.enabled:
		return max(a.fill, awsMinFill)
	}
	return math.Inf(1)
}

func (a *adaptive) acceptedRate(now time.Time) float64 {
	i, _ := slices.BinarySearchFunc(a.acks, now.Add(-time.Second), time.Time.Compare)
	return float64(len(a.acks) - i)
}

// TestAdaptive_isAWSsModel: no limit before the first throttle; a throttle
// cuts to 0.7 of the rate measured; successes regrow it along the cubic
// back to that rate, never over twice the rate measured.
func TestAdaptive_isAWSsModel(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	a := newAdaptive(clock, rules{})
	send := func(refused bool) {
		tk, _, ok := a.askOK(bg, clock.now)
		if !ok {
			t.Fatalf("held at %v", clock.now)
		}
		a.Done(tk, Answer{Refused: refused})
		a.Release(tk)
	}
	for range 40 { // 40 a second for two seconds: no limit yet
		clock.now = clock.now.Add(50 * time.Millisecond)
		send(false)
	}
	measured := a.measured
	if a.enabled || measured < 15 || measured > 25 {
		t.Fatalf("before a throttle: bucket on %v, measured %.1f a second: want off, about 20", a.enabled, measured)
	}
	clock.now = clock.now.Add(50 * time.Millisecond)
	send(true)
	if !a.enabled || math.Abs(a.fill-awsBeta*a.lastMax) > 1e-9 {
		t.Fatalf("after a throttle: rate %.2f, last max %.2f: want 0.7 of it", a.fill, a.lastMax)
	}
	clock.now = a.lastThrottle.Add(time.Duration(math.Cbrt(a.lastMax*(1-awsBeta)/awsC) * float64(time.Second)))
	a.success(clock.now)
	if want := min(a.lastMax, 2*a.measured); math.Abs(a.fill-want) > 1e-6 {
		t.Fatalf("at the cubic's plateau: rate %.2f, want %.2f", a.fill, want)
	}
}

// variant is a model the tables compare: the baseline with some of
// today's rules, or today's Pacer.
type variant struct {
	name string
	new  func(Clock) simPacer
}

func baselineWith(r rules) func(Clock) simPacer {
	return func(c Clock) simPacer { return newAdaptive(c, r) }
}

// named are the rules by name, each with what sets it.
var named = []struct {
	name string
	set  func(*rules, bool)
}{
	{"start", func(r *rules, v bool) { r.start = v }},
	{"gap floor", func(r *rules, v bool) { r.gapFloor = v }},
	{"fresh", func(r *rules, v bool) { r.fresh = v }},
	{"accepted", func(r *rules, v bool) { r.accepted = v }},
	{"in flight", func(r *rules, v bool) { r.inFlight = v }},
	{"sent rate", func(r *rules, v bool) { r.sentRate = v }},
	{"cubic", func(r *rules, v bool) { r.cubic = v }},
	{"no cap", func(r *rules, v bool) { r.noCap = v }},
	{"burst 1", func(r *rules, v bool) { r.burst1 = v }},
	{"grow", func(r *rules, v bool) { r.grow = v }},
	{"restart", func(r *rules, v bool) { r.restart = v }},
	{"rebase", func(r *rules, v bool) { r.rebase = v }},
	{"shut out", func(r *rules, v bool) { r.shutOut = v }},
}

// TestBaseline_rulesAgainstAWS prints two tables over every unannounced
// row on both networks, each cell the change in median and worst time
// against the ideal and in median share refused: each of today's rules
// added to the baseline alone (grow and restart, which work on the start
// and the cubic, beside those), and each removed from the baseline with
// every rule ("all", which comes within 0.08x of today's Pacer on most
// rows). Then, per rule, the rows it helps and those it hurts, each way:
// by 0.03x of the median, or half a point of refusals past the target of
// 3%, without the other moving as far the other way. It is a design tool,
// not a target: it runs only with PACE_BASELINE=1 (a few minutes).
func TestBaseline_rulesAgainstAWS(t *testing.T) {
	if os.Getenv("PACE_BASELINE") == "" {
		t.Skip("PACE_BASELINE=1 prints the tables of today's rules against the AWS baseline")
	}
	added := []variant{{"baseline", baselineWith(rules{})}}
	removed := []variant{{"all", baselineWith(all)}}
	for _, r := range named {
		var with rules
		r.set(&with, true)
		switch r.name {
		case "grow", "restart", "cubic", "shut out":
			with.start, with.sentRate, with.cubic = true, true, true
		case "rebase":
			with.fresh = true
		}
		added = append(added, variant{"+" + r.name, baselineWith(with)})
		without := all
		r.set(&without, false)
		removed = append(removed, variant{"-" + r.name, baselineWith(without)})
	}
	today := variant{"today", func(c Clock) simPacer { return defaultPacer(c) }}
	added = append(added, removed[0], today)
	removed = append(removed, today)
	var b strings.Builder
	b.WriteString("Added to the baseline (+cubic, +grow, +restart, +shut out: with start, sent rate and cubic; +rebase: with fresh):\n\n")
	compare(&b, added)
	b.WriteString("\nRemoved from all:\n\n")
	compare(&b, removed)
	t.Log("\n" + b.String())
}

// compare writes the table of variants against the first, and the rows
// each helps and hurts.
func compare(b *strings.Builder, variants []variant) {
	var rows []string
	table := map[string][]figures{} // row, network → by variant
	for _, n := range networks {
		for _, c := range unannounced {
			row := c.name + ", " + n.name
			rows = append(rows, row)
			for _, v := range variants {
				table[row] = append(table[row], c.figures(n.net, v.new))
			}
		}
	}
	fmt.Fprintf(b, "| row | %s |", variants[0].name)
	for _, v := range variants[1:] {
		fmt.Fprintf(b, " %s |", v.name)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(variants)-1) + "\n")
	helps, hurts := make([][]string, len(variants)), make([][]string, len(variants))
	over := func(r float64) float64 { return max(r-3, 0) } // refusals past the target
	for _, row := range rows {
		base := table[row][0]
		fmt.Fprintf(b, "| %s | %.2fx, %.2fx, %.1f%% |", row, base.median, base.worst, base.refused)
		for i, f := range table[row][1:] {
			dm, dr := f.median-base.median, over(f.refused)-over(base.refused)
			fmt.Fprintf(b, " %+.2f, %+.2f, %+.1f |", dm, f.worst-base.worst, f.refused-base.refused)
			switch {
			case dm <= -0.03 && dr < 0.5 || dr <= -0.5 && dm < 0.03:
				helps[i+1] = append(helps[i+1], row)
			case dm >= 0.03 || dr >= 0.5:
				hurts[i+1] = append(hurts[i+1], row)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "\n| against %s | rows it helps | rows it hurts |\n|---|---|---|\n", variants[0].name)
	for i, v := range variants[1:] {
		fmt.Fprintf(b, "| %s | %d: %s | %d: %s |\n", v.name, len(helps[i+1]), strings.Join(helps[i+1], "; "),
			len(hurts[i+1]), strings.Join(hurts[i+1], "; "))
	}
}

// toldRate is the rate each unannounced row's limit admits (the most, where
// it changes), for TestBaseline_told; a row limiting requests in flight is
// told its limit.
var toldRate = map[string]float64{
	"bucket burst 1": 50, "bucket burst 10": 50, "bucket burst 50": 50, "bucket 50, burst 20 queued": 50,
	"bucket 30, burst 1": 30, "fixed window": 50, "rolling window": 50, "rolling, counting refused": 50,
	"bucket burst 10, no Retry-After": 50, "rolling, counting refused, no Retry-After": 50,
	"HAProxy's rate, no Retry-After": 50, "HAProxy's rate, Retry-After: 1": 50, "halved after 3 s": 50, "doubled after 3 s": 50,
}

// TestBaseline_told is the floor of the targets: today's Pacer told the
// limit (its rate as the ceiling, or its requests in flight), so that
// nothing is left to learn but what the limit does with a network's
// jitter and Terraform's walkers. A cell the told Pacer misses is a target
// no client can meet by learning better; one that the Pacer told at its
// first refusal meets and today's misses is lost to learning after it.
func TestBaseline_told(t *testing.T) {
	if os.Getenv("PACE_BASELINE") == "" {
		t.Skip("PACE_BASELINE=1 prints each row against the Pacer told its limit")
	}
	var b strings.Builder
	b.WriteString("| row | today | told the limit | told 0.9 of it | told at its first refusal |\n|---|---|---|---|---|\n")
	mark := func(f figures) string {
		s := fmt.Sprintf("%.2fx, %.2fx, %.1f%%", f.median, f.worst, f.refused)
		if !(figures{1.15, 1.3, 3}).within(f) {
			s = "**" + s + "**"
		}
		return s
	}
	for _, n := range networks {
		for _, c := range unannounced {
			if toldRate[c.name] == 0 && c.told == 0 {
				t.Fatalf("toldRate has no rate for the row %q", c.name)
			}
			told := func(share float64) func(Clock) simPacer {
				return func(cl Clock) simPacer {
					if c.told > 0 {
						return New(cl, c.told, 0, 30*time.Second)
					}
					return New(cl, 8, share*toldRate[c.name], 30*time.Second)
				}
			}
			atRefusal := func(cl Clock) simPacer {
				return &toldAtRefusal{learner: defaultPacer(cl), told: told(1)(cl), of: map[Ticket]simPacer{}}
			}
			fmt.Fprintf(&b, "| %s, %s | %s | %s | %s | %s |\n", c.name, n.name,
				mark(c.figures(n.net, func(cl Clock) simPacer { return defaultPacer(cl) })),
				mark(c.figures(n.net, told(1))), mark(c.figures(n.net, told(0.9))), mark(c.figures(n.net, atRefusal)))
		}
	}
	t.Log("\n" + b.String())
}

// toldAtRefusal is the best a client that learns could do: today's Pacer
// till the service first refuses, then one told the limit, as if
// the first refusal had taught it everything. The refusal itself, and the
// requests already in flight when it came, are what learning cannot
// avoid: a limit says nothing of itself before it refuses.
type toldAtRefusal struct {
	learner, told simPacer
	refused       bool
	of            map[Ticket]simPacer // who let each request in flight go
}

func (w *toldAtRefusal) now() simPacer {
	if w.refused {
		return w.told
	}
	return w.learner
}

func (w *toldAtRefusal) askOK(ctx context.Context, now time.Time) (Ticket, time.Duration, bool) {
	p := w.now()
	t, wait, ok := p.askOK(ctx, now)
	if ok {
		w.of[t] = p
	}
	return t, wait, ok
}

func (w *toldAtRefusal) Done(t Ticket, a Answer) {
	w.of[t].Done(t, a)
	w.refused = w.refused || a.Refused
}

func (w *toldAtRefusal) Release(t Ticket) {
	w.of[t].Release(t)
	delete(w.of, t)
}

func (w *toldAtRefusal) pollAfter(d time.Duration) time.Duration { return w.now().pollAfter(d) }
func (w *toldAtRefusal) answersWake() bool                       { return w.now().answersWake() }
func (w *toldAtRefusal) sharesPace() bool                        { return false }
