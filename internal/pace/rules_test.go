package pace

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// The rules of the package doc's unannounced model, one table each, in the
// form of aws-sdk-go-v2's adaptive rate limiter's tests: a sequence of
// events in virtual time, and the phase and pace the model is in after
// each. The figures are literals, worked from the rule by hand, so that a
// constant moved changes them: each of pacer.go's constants moved 10%
// either way (by one where that rounds to itself) fails a table.

// ruleStep is an event at ms milliseconds after the first request, and the
// model after it: its phase (phaseOf) and its pace a second, to the
// hundredth.
type ruleStep struct {
	ms    int
	do    ruleEvent
	phase string
	pace  float64
}

// ruleEvent is one of: a request let go (numbered on from 1, required to
// go), a request that asks and is held for held milliseconds (-1: till an
// answer), or answers to requests, each released after it.
type ruleEvent struct {
	goes       bool
	held       int
	answer     []int
	refused    bool
	retryAfter time.Duration
}

func goes() ruleEvent            { return ruleEvent{goes: true} }
func held(ms int) ruleEvent      { return ruleEvent{held: ms} }
func accepts(i ...int) ruleEvent { return ruleEvent{answer: i} }
func refuses(i ...int) ruleEvent { return ruleEvent{answer: i, refused: true} }
func tillAnswered() ruleEvent    { return ruleEvent{held: -1} }
func refusesAsking(retryAfterMS int, i ...int) ruleEvent {
	return ruleEvent{answer: i, refused: true, retryAfter: time.Duration(retryAfterMS) * time.Millisecond}
}

func (e ruleEvent) String() string {
	switch {
	case e.goes:
		return "one let go"
	case e.held != 0:
		return fmt.Sprintf("one asking held %d ms", e.held)
	case !e.refused:
		return fmt.Sprintf("%v accepted", e.answer)
	case e.retryAfter > 0:
		return fmt.Sprintf("%v refused, Retry-After %v", e.answer, e.retryAfter)
	}
	return fmt.Sprintf("%v refused", e.answer)
}

// phaseOf names the model's phase: starting (doubling from StartRate, no
// rate refused), following a rate refused (doubling back from
// FirstBackoff of it, or along the cubic), or probing a service that
// refuses everything; and whether it holds a number in flight, or a pause.
func phaseOf(p *Pacer, now time.Time) string {
	phase := p.phase.phaseName()
	if p.inFlightLimit > 0 {
		phase += fmt.Sprintf(", %d in flight", p.inFlightLimit)
	}
	if now.Before(p.pausedTil) {
		phase += ", paused"
	}
	return phase
}

// ruleTable is a rule, as the package doc states it, and its steps.
type ruleTable struct {
	rule  string
	steps []ruleStep
}

var ruleTables = []ruleTable{
	{"the pace doubles every StartDoubling from StartRate, only while requests wait for it", []ruleStep{
		{0, goes(), "starting", 100},
		{0, accepts(1), "starting", 100}, // the first goes alone
		{1, held(9), "starting", 100},
		{101, goes(), "starting", 200}, // waited 100 ms
		{102, held(4), "starting", 200},
		{152, goes(), "starting", 282.84}, // 150 ms
		{1000, goes(), "starting", 282.84},
		{2000, goes(), "starting", 282.84}, // none waited: no growth
	}},
	{"a refusal while it doubles at the start restarts it from FirstBackoff of the rate refused up to Backoff of it, then the cubic back to it after Recover", []ruleStep{
		{0, goes(), "starting", 100},
		{0, accepts(1), "starting", 100},
		{1, held(9), "starting", 100},
		{101, goes(), "starting", 200},
		{106, goes(), "starting", 200},
		{111, goes(), "starting", 200}, // 5 ms apart
		{120, refuses(4), "following", 100},
		{120, held(10), "following", 100}, // the token earned at 200 taken back
		{220, goes(), "following", 160},   // doubled past Backoff of 200: the cubic begins
		{221, held(5), "following", 160},
		{1721, goes(), "following", 195},
		{1722, held(4), "following", 195},
		{3222, goes(), "following", 200}, // Recover since the cubic began
		{3223, held(4), "following", 200},
		{4723, goes(), "following", 205},
	}},
	{"a refusal cuts to Backoff of the rate requests went at, over RateSpan or since the request before, where lower than the pace", []ruleStep{
		{0, goes(), "starting", 100},
		{0, accepts(1), "starting", 100},
		{10, goes(), "starting", 100},
		{20, goes(), "starting", 100},
		{265, goes(), "starting", 100},
		{300, refuses(4), "following", 2.04}, // went at 4.08 a second since 20 ms
	}},
	{"following, a refusal cuts to Backoff of the pace", []ruleStep{
		{0, goes(), "starting", 100},
		{100, refuses(1), "following", 50},
		{100, held(20), "following", 50},
		{200, goes(), "following", 80}, // doubled past Backoff of 100: the cubic begins
		{201, held(12), "following", 80},
		{300, accepts(2), "following", 80},
		{1701, goes(), "following", 97.5},
		{1702, held(9), "following", 97.5},
		{1705, refuses(3), "following", 78},
	}},
	{"a refusal while nothing sent since the cut was accepted probes one request at a time, gaps doubling from ProbeShare of the Retry-After up to it, the pace not cut", []ruleStep{
		{0, goes(), "starting", 100},
		{100, refuses(1), "following", 50},
		{120, goes(), "following", 50},
		{140, goes(), "following", 50},
		{200, refusesAsking(800, 2), "probing", 50},
		{200, tillAnswered(), "probing", 50}, // one in flight
		{210, refuses(3), "probing", 50},     // sent before probing began: no news
		{210, held(190), "probing", 50},
		{400, goes(), "probing", 50},
		{400, tillAnswered(), "probing", 50},
		{450, refusesAsking(800, 4), "probing", 50},
		{450, held(400), "probing", 50},
		{850, goes(), "probing", 50},
		{900, refusesAsking(800, 5), "probing", 50},
		{900, held(800), "probing", 50}, // at most the Retry-After
		{1700, goes(), "probing", 50},
		{1750, accepts(6), "following", 50},
	}},
	{"refusals of requests sent before probing began are no news of the probe", []ruleStep{
		{0, goes(), "starting", 100},
		{100, refuses(1), "following", 50},
		{120, goes(), "following", 50},
		{140, goes(), "following", 50},
		{200, goes(), "following", 50}, // at the instant the next answer arrives
		{200, refusesAsking(800, 2), "probing", 50},
		{210, refuses(3, 4), "probing", 50}, // not refused probes: the gap stays
		{210, held(190), "probing", 50},
		{400, goes(), "probing", 50},
		{450, accepts(5), "following", 50},
	}},
	{"an acceptance of any request sent since the cut ends probing: the service does not refuse everything", []ruleStep{
		{0, goes(), "starting", 100},
		{100, refuses(1), "following", 50},
		{120, goes(), "following", 50},
		{140, goes(), "following", 50},
		{200, refuses(2), "probing", 50},
		{220, accepts(3), "following", 50},
	}},
	{"after probing, a cut measures the rate the service accepted over the last second", []ruleStep{
		{0, goes(), "starting", 100},
		{5, accepts(1), "starting", 100},
		{10, goes(), "starting", 100},
		{100, refuses(2), "following", 50},
		{120, goes(), "following", 50},
		{200, refuses(3), "probing", 50},
		{1100, goes(), "probing", 50},
		{1110, accepts(4), "following", 50},
		{1125, goes(), "following", 50},
		{1130, accepts(5), "following", 50},
		{1145, goes(), "following", 50},
		{1150, refuses(6), "following", 1}, // 2 accepted over the last second
	}},
	{"after probing, a cut within a second of the first request measures the pace", []ruleStep{
		{0, goes(), "starting", 100},
		{100, refuses(1), "following", 50},
		{120, goes(), "following", 50},
		{200, refuses(2), "probing", 50},
		{220, goes(), "probing", 50},
		{230, accepts(3), "following", 50},
		{250, goes(), "following", 50},
		{260, refuses(4), "following", 25}, // not the 33 a second requests went at
	}},
	{"a probe accepted after RefusedInARow refusals in a row re-bases the rate refused to the most a second accepted", []ruleStep{
		{0, goes(), "starting", 100},
		{10, accepts(1), "starting", 100},
		{20, goes(), "starting", 100},
		{30, accepts(2), "starting", 100},
		{40, goes(), "starting", 100},
		{50, accepts(3), "starting", 100},
		{60, goes(), "starting", 100},
		{70, accepts(4), "starting", 100},
		{80, goes(), "starting", 100},
		{90, refuses(5), "following", 25}, // went at 50 a second
		{130, goes(), "following", 25},
		{140, refuses(6), "probing", 25},
		{180, goes(), "probing", 25},
		{190, refuses(7), "probing", 25},
		{270, goes(), "probing", 25},
		{280, accepts(8), "following", 3.2}, // 4 accepted in the second before the cut
	}},
	{"the last of RefusedInARow refusals in a row, sent before the cut, re-bases the pace to Backoff of what the service accepted over the last second", []ruleStep{
		{0, goes(), "starting", 100},
		{100, accepts(1), "starting", 100},
		{200, goes(), "starting", 100},
		{300, accepts(2), "starting", 100},
		{400, goes(), "starting", 100},
		{500, accepts(3), "starting", 100},
		{600, goes(), "starting", 100},
		{700, accepts(4), "starting", 100},
		{800, goes(), "starting", 100},
		{900, accepts(5), "starting", 100},
		{1000, goes(), "starting", 100},
		{1010, goes(), "starting", 100},
		{1020, goes(), "starting", 100},
		{1030, goes(), "starting", 100},
		{1100, refuses(6), "following", 8.7}, // went at 17.39 a second over RateSpan
		{1100, refuses(7), "following", 8.7},
		{1100, refuses(8), "following", 4}, // 5 accepted over the last second
		{1100, refuses(9), "following", 4},
	}},
	{"a Retry-After past RoundingPause holds every request, for at most maxWait", []ruleStep{
		{0, goes(), "starting", 100},
		{5, accepts(1), "starting", 100},
		{10, goes(), "starting", 100},
		{20, goes(), "starting", 100},
		{100, refusesAsking(950, 2), "following", 50},
		{120, goes(), "following", 50},
		{130, accepts(4), "following", 50},
		{200, refusesAsking(1050, 3), "following, paused", 50},
		{200, held(1050), "following, paused", 50},
		{1250, goes(), "following", 50},
		{1300, refusesAsking(120_000, 5), "following, paused", 25},
		{1300, held(60_000), "following, paused", 25},
	}},
	{"answers to requests sent before a cut are no news of the pace after it", []ruleStep{
		{0, goes(), "starting", 100},
		{5, accepts(1), "starting", 100},
		{10, goes(), "starting", 100},
		{20, goes(), "starting", 100},
		{30, goes(), "starting", 100},
		{100, refuses(4), "following", 50},
		{100, refuses(3), "following", 50}, // not a cut
		{100, accepts(2), "following", 50}, // not an acceptance since the cut
		{120, goes(), "following", 50},
		{200, refuses(5), "probing", 50}, // nothing accepted since the cut
	}},
}

// inFlightSteps: a cut, then groups of requests let go a second apart
// (the nth with n-1 others in flight) and accepted newest first, so that
// the oldest accepted went with the most others; then three let go a
// second apart, and the third, with two others in flight, refused.
func inFlightSteps(phase string, pace float64, groups ...int) []ruleStep {
	steps := []ruleStep{{0, goes(), "starting", 100}, {100, refuses(1), "following", 50}}
	ms, n := 1000, 1
	for _, g := range groups {
		for range g {
			steps = append(steps, ruleStep{ms, goes(), "following", 50})
			ms, n = ms+1000, n+1
		}
		for i := n; i > n-g; i-- {
			steps = append(steps, ruleStep{ms, accepts(i), "following", 50})
		}
	}
	for range 3 {
		steps = append(steps, ruleStep{ms, goes(), "following", 50})
		ms, n = ms+1000, n+1
	}
	return append(steps, ruleStep{ms, refuses(n), phase, pace})
}

// inFlightTables hold the in-flight rule: after a cut, a refusal of a
// request sent with more in flight than all but one of the last
// InFlightHistory accepted, once InFlightEvidence were, some of which went
// beside another, holds the Pacer to that many and starts the pace again.
var inFlightTables = []ruleTable{
	{"8 accepted, half beside another, then one refused beside two: held to two in flight, the pace starting again",
		inFlightSteps("starting, 2 in flight", 100, 2, 2, 2, 2)},
	{"7 accepted: not yet InFlightEvidence, a rate's cut",
		inFlightSteps("following", 25, 2, 2, 2, 1)},
	{"8 accepted, each alone: a rate's cut", inFlightSteps("following", 25, 1, 1, 1, 1, 1, 1, 1, 1)},
	{"18 accepted, the two oldest with two others or more: InFlightHistory keeps neither, held to two in flight",
		inFlightSteps("starting, 2 in flight", 100, 4, 2, 2, 2, 2, 2, 2, 2)},
	{"16 accepted, two with two others or more: a rate's cut",
		inFlightSteps("following", 25, 4, 2, 2, 2, 2, 2, 2)},
}

func TestPacer_rules(t *testing.T) {
	for _, tb := range slices.Concat(ruleTables, inFlightTables) {
		t.Run(tb.rule, func(t *testing.T) {
			start := time.Unix(1_800_000_000, 0)
			clock := &fakeClock{now: start}
			p := New(clock, 8, 0, time.Minute)
			var tickets []Ticket
			var log strings.Builder
			for i, s := range tb.steps {
				clock.now = start.Add(time.Duration(s.ms) * time.Millisecond)
				e := s.do
				fail := func(format string, args ...any) {
					t.Fatalf("step %d, at %d ms, %v: %s\nthe steps so far:\n%s", i, s.ms, e, fmt.Sprintf(format, args...), log.String())
				}
				if e.goes {
					tk, wait, ok := p.reserveOK(clock.now)
					if !ok {
						fail("held %v", wait)
					}
					tickets = append(tickets, tk)
				}
				if e.held != 0 {
					_, wait, ok := p.reserveOK(clock.now)
					got := int(wait.Round(time.Millisecond) / time.Millisecond)
					if wait == untilAnswered {
						got = -1
					}
					if ok || got != e.held {
						fail("let go %t, held %d ms", ok, got)
					}
				}
				for _, n := range e.answer {
					p.Done(tickets[n-1], Answer{Refused: e.refused, RetryAfter: e.retryAfter})
					p.Release(tickets[n-1])
				}
				phase, pace := phaseOf(p, clock.now), math.Round(float64(p.pace.Limit())*100)/100
				fmt.Fprintf(&log, "  {%d, %v}: %s, %.2f\n", s.ms, e, phase, pace)
				if phase != s.phase || pace != s.pace {
					fail("%s at %.2f a second; want %s at %.2f", phase, pace, s.phase, s.pace)
				}
				st := stateAt(p, clock.now)
				if why := broken(&st); why != "" {
					fail("the state breaks an invariant: %s", why)
				}
			}
		})
	}
}
