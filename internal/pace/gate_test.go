package pace

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/ratelimit"
)

// fakeClock is virtual time: it moves only when the test moves it.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time                       { return c.now }
func (c *fakeClock) After(time.Duration) <-chan time.Time { return nil }

// countedGate is a gate that counts its requests in flight, as its Pacer
// does.
type countedGate struct {
	gate
	maxWait  time.Duration
	inFlight int
}

func (g *countedGate) reserve(now time.Time) time.Duration {
	wait := g.gate.reserve(now, g.inFlight, g.maxWait)
	if wait == 0 {
		g.inFlight++
	}
	return wait
}

// done is the answer at now of a request sent at sent, refused or not.
func (g *countedGate) done(h http.Header, refused bool, sent, now time.Time) {
	g.inFlight--
	g.gate.done(h, refused, sent, now)
}

// quotaService is a fixed window of limit requests each window, its
// windows starting phase after each multiple of window since 1970, that
// announces its quota on every answer in one family of headers, as
// services send it.
type quotaService struct {
	q      ratelimit.Quota
	family string
}

func newQuotaService(limit int, window, phase time.Duration, family string) *quotaService {
	return &quotaService{q: ratelimit.Quota{Limit: limit, Window: window, Start: time.Unix(0, 0).Add(phase)}, family: family}
}

// answer counts a request arriving at at, and answers it.
func (s *quotaService) answer(at time.Time) (accepted bool, h http.Header) {
	remaining, reset := s.q.Take(at)
	h = http.Header{}
	s.q.Announce(h, s.family, at, remaining, reset)
	return remaining >= 0, h
}

// plan sends n requests, conc at a time, each answered rtt after it goes
// (counted half way), through g in virtual time, every refused one sent
// again; it returns how long they took and how many were refused.
func plan(s *quotaService, g *countedGate, n, conc int, rtt time.Duration, start time.Time) (took time.Duration, refused int) {
	clock := &fakeClock{now: start}
	type answer struct {
		sent, at time.Time
		accepted bool
		h        http.Header
	}
	var inFlight []answer
	toSend, done := n, 0
	for done < n {
		recheck := time.Time{}
		for len(inFlight) < conc && toSend > 0 {
			if wait := g.reserve(clock.now); wait > 0 {
				recheck = clock.now.Add(wait)
				break
			}
			toSend--
			ok, h := s.answer(clock.now.Add(rtt / 2))
			inFlight = append(inFlight, answer{clock.now, clock.now.Add(rtt), ok, h})
		}
		// The next event: the first answer (in order, as sent), or the
		// end of a wait with nothing in flight.
		if len(inFlight) == 0 {
			clock.now = recheck
			continue
		}
		a := inFlight[0]
		inFlight = inFlight[1:]
		clock.now = a.at
		g.done(a.h, !a.accepted, a.sent, clock.now)
		if a.accepted {
			done++
		} else {
			refused++
			toSend++
		}
	}
	return clock.now.Sub(start), refused
}

// With a quota announced, in either family, requests go until the window's
// requests are spent, then wait for its reset: nothing is refused, and the
// plan ends when the window it needs opens, give or take the reset's
// rounding and a round trip.
func TestGate_obeysAnAnnouncedQuotaBeforeAnyRefusal(t *testing.T) {
	t.Parallel()
	for _, family := range []string{"github", "ietf"} {
		for _, window := range []time.Duration{2 * time.Second, 10 * time.Second} {
			for _, rtt := range []time.Duration{0, 80 * time.Millisecond} {
				name := fmt.Sprintf("%s, 100 per %s, round trip %s", family, window, rtt)
				s := newQuotaService(100, window, 300*time.Millisecond, family)
				start := time.Unix(1_800_000_000, 0).Add(4100 * time.Millisecond)
				took, refused := plan(s, &countedGate{maxWait: time.Minute}, 301, 8, rtt, start)
				// The fourth window the plan needs opens two windows after
				// the first ends.
				firstEnds := window - start.Sub(s.q.Start)%window
				ideal := firstEnds + 2*window + rtt
				t.Logf("%s: %s, %.2fx of %s", name, took, float64(took)/float64(ideal), ideal)
				if refused != 0 || took < ideal || took > ideal+3*(time.Second+resetMargin) {
					t.Errorf("%s: took %s (ideal %s), %d refused", name, took, ideal, refused)
				}
			}
		}
	}
}

// The first request goes alone: its answer says whether the service
// announces a quota. Without one, nothing is held; a reset further off than
// the longest wait is not waited for, as the service's refusal says when.
func TestGate_holdsNothingUnannounced(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	g := &countedGate{maxWait: 30 * time.Second}
	if g.reserve(now) != 0 || g.reserve(now) == 0 {
		t.Fatal("the first request did not go alone")
	}
	g.done(http.Header{}, false, now, now)
	for range 20 {
		if wait := g.reserve(now); wait != 0 {
			t.Fatalf("held %s with nothing announced", wait)
		}
	}
	g.done(http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"5"}}, false, now, now)
	if wait := g.reserve(now); wait != 5*time.Second+resetMargin {
		t.Errorf("held %s for a reset 5 s away", wait)
	}
	g = &countedGate{maxWait: 30 * time.Second}
	g.reserve(now)
	g.done(http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(now.Add(time.Hour).Unix(), 10)}}, false, now, now)
	if wait := g.reserve(now); wait != 0 {
		t.Errorf("held %s for a reset an hour away", wait)
	}
}

// send lets one request through g at now, or after what it waits, answered
// at once by s; it returns when it went.
func send(g *countedGate, s *quotaService, now time.Time) time.Time {
	for {
		wait := g.reserve(now)
		if wait == 0 {
			break
		}
		now = now.Add(wait)
	}
	ok, h := s.answer(now)
	g.done(h, !ok, now, now)
	return now
}

// Two gates that share nothing but the quota each measure their share of
// its fall from their own answers: one sending a request for every three
// of the other's has a quarter of it. Each then spends its share of what
// remains spread until the reset, rather than all it sees at once; a gate
// alone spends at once.
func TestGate_measuresItsShareOfTheFall(t *testing.T) {
	t.Parallel()
	s := newQuotaService(120, 10*time.Second, 0, "discord")
	now := time.Unix(1_800_000_000, 0).Add(100 * time.Millisecond)
	a, b := &countedGate{maxWait: time.Minute}, &countedGate{maxWait: time.Minute}
	for range 10 {
		for range 3 {
			now = send(b, s, now)
		}
		now = send(a, s, now)
	}
	if !a.crowded() || a.share < 0.2 || a.share > 0.3 || !b.crowded() || b.share < 0.7 || b.share > 0.8 {
		t.Fatalf("shares %.3f and %.3f: want a quarter and three quarters", a.share, b.share)
	}
	// a's share of the 80 that remain, 20, over the rest of the window.
	want := time.Duration(float64(time.Unix(1_800_000_010, 0).Add(resetMargin).Sub(now)) / (a.share * 80))
	if wait := a.reserve(now); wait < want*9/10 || wait > want*11/10 {
		t.Fatalf("a waits %s for its next request: want its share spread until the reset, %s apart", wait, want)
	}
	alone := &countedGate{maxWait: time.Minute}
	s = newQuotaService(100, 10*time.Second, 0, "discord")
	for range 10 {
		if send(alone, s, now) != now {
			t.Fatalf("a gate alone was held")
		}
	}
	if alone.crowded() || alone.share < aloneShare {
		t.Fatalf("a gate alone measured a share of %.3f", alone.share)
	}
}

// Windows at fixed times or each opened by the first request after the
// last one ended (GitHub's), with the reset an epoch second rounded up:
// whichever they are, and wherever in a second the plan begins, the gate
// lets no request go before the window it is counted in has room, and
// once it has seen a window spent it learns where opened windows end: 601
// requests take at most 1.2x the six windows they need.
func TestGate_neverEarlyWhicheverTheWindows(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{2 * time.Second, 10 * time.Second} {
		for _, rtt := range []time.Duration{0, 10 * time.Millisecond, 80 * time.Millisecond} {
			for _, start := range []time.Duration{0, 700 * time.Millisecond, 4100 * time.Millisecond} {
				for _, phase := range []time.Duration{-1, 0, 300 * time.Millisecond, 900 * time.Millisecond, 1500 * time.Millisecond} {
					s := newQuotaService(100, window, phase, "github")
					s.q.Opened = phase < 0
					took, refused := plan(s, &countedGate{maxWait: time.Minute}, 601, 8, rtt, time.Unix(1_800_000_000, 0).Add(start))
					name := fmt.Sprintf("windows of %s at %s, round trip %s, from %s", window, phase, rtt, start)
					if s.q.Opened {
						name = fmt.Sprintf("windows of %s opened by a request, round trip %s, from %s", window, rtt, start)
					}
					if ideal := 6*window + rtt; refused > 0 || s.q.Opened && float64(took) > 1.2*float64(ideal) {
						t.Errorf("%s: took %s (%.2fx), %d refused", name, took, float64(took)/float64(ideal), refused)
					}
				}
			}
		}
	}
}

// githubAnswer is an answer's X-RateLimit headers: remaining of 100, the
// reset at reset, an epoch second.
func githubAnswer(remaining int, reset time.Time) http.Header {
	return http.Header{"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {strconv.Itoa(remaining)}, "X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)}}
}

// Where a window rounded alike ends, answer by answer (milliseconds from
// the first request): each reading narrows with every answer, a request
// goes in the next window only once both that stand say it ended, a
// contradicted fixed reading starts again from the reset, and a
// contradicted opened one is dropped.
func TestGate_readsWhereWindowsEnd(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_800_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	g := &gate{}
	for i, step := range []struct {
		sent, at, remaining, reset int // reset in whole seconds
		after, by                  int
		notFixed, notOpened        bool
		why                        string
	}{
		{0, 10, 99, 3, 2000, 3000, false, false, "opened by it: both readings end within the second before the reset"},
		{100, 110, 0, 3, 2000, 3000, false, false, "counted in it: it ends after 100, which both knew"},
		{2250, 2260, 99, 5, 4250, 4510, false, false, "a new window by 2260: fixed, 740 early; opened, 2000 to 2260 after its opener; the later reading's bracket"},
		{4380, 4390, 0, 5, 4380, 4510, true, false, "counted in it at 4380, after the fixed reading's end: opened alone"},
		{4530, 4540, 99, 7, 6660, 6790, true, false, "opened by 4530: 2130 to 2260 after it"},
		{6800, 6810, 5, 7, 6000, 7000, true, true, "counted in it after the opened reading's end: the second before the reset"},
	} {
		g.done(githubAnswer(step.remaining, t0.Add(time.Duration(step.reset)*time.Second)), false, ms(step.sent), ms(step.at))
		after, by := g.ends()
		if got, want := fmt.Sprint(after.Sub(t0).Milliseconds(), by.Sub(t0).Milliseconds(), g.notFixed, g.notOpened), fmt.Sprint(step.after, step.by, step.notFixed, step.notOpened); got != want {
			t.Errorf("answer %d (%s): ends after, by, fixed contradicted, opened contradicted: %s, want %s", i+1, step.why, got, want)
		}
		if got, want := g.resetAt(), by.Add(resetMargin); !got.Equal(want) {
			t.Errorf("answer %d: the window taken to reset at %s, want resetMargin after where it ends by", i+1, got.Sub(t0))
		}
	}
}

// Alone, once a request waited for a window spent, the window's last
// endProbes requests wait to go spread over where it may end, the first a
// quarter of the way; a run that never waited goes at once
// (TestGate_aRunAfterOthersGoesAtOnce), and none waits past maxWait.
func TestGate_holdsTheWindowsLastToLearnItsEnd(t *testing.T) {
	t.Parallel()
	for _, maxWait := range []time.Duration{time.Minute, 100 * time.Millisecond} {
		s := newQuotaService(100, 2*time.Second, 0, "github")
		s.q.Opened = true
		g := &countedGate{maxWait: time.Minute}
		now := time.Unix(1_800_000_000, 0)
		for range 100 {
			now = send(g, s, now)
		}
		if wait := g.reserve(now); wait == 0 || !g.short {
			t.Fatalf("the window spent, a request went")
		}
		now = send(g, s, now) // the next window's first, opened by it
		for range 100 - endProbes - 1 {
			now = send(g, s, now)
		}
		after, by := g.ends()
		g.maxWait = maxWait
		wait := g.reserve(now)
		if want := after.Add(by.Sub(after) / (endProbes + 1)).Sub(now); maxWait < want {
			if wait != 0 {
				t.Errorf("maxWait %s: the window's last requests wait %s", maxWait, wait)
			}
		} else if wait != want {
			t.Errorf("the window's first of its last %d waits %s, want %s: a quarter of the way from %s to %s", endProbes, wait, want, after.Format("05.000"), by.Format("05.000"))
		}
	}
}

// A window whose reset is announced as a whole second rounded up (GitHub's
// X-RateLimit-Reset) is seen to end early: the gate learns how early, never
// more than it is, and waits for the window's true end rather than the
// rounded one.
func TestGate_learnsWhereARoundedWindowEnds(t *testing.T) {
	t.Parallel()
	// Windows of 2 s ending at .3 of a second: announced 0.7 s late.
	s := newQuotaService(100, 2*time.Second, 300*time.Millisecond, "github")
	g := &countedGate{maxWait: time.Minute}
	now := time.Unix(1_800_000_000, 0).Add(1500 * time.Millisecond)
	for range 30 { // one every 50 ms, across the end at 2.3 s
		now = send(g, s, now).Add(50 * time.Millisecond)
	}
	if g.early > 700*time.Millisecond || g.early < 600*time.Millisecond {
		t.Fatalf("learnt windows end %s early: want at most 0.7 s, within the 50 ms between requests", g.early)
	}
	for range 100 { // the window ending at 4.3 s, spent
		now = send(g, s, now)
	}
	if now = send(g, s, now); now.After(time.Unix(1_800_000_004, 0).Add(400 * time.Millisecond)) {
		t.Fatalf("the window's 101st went at %s: want soon after its end at 4.3 s, not its rounded 5 s", now.Format("05.000"))
	}
}

// Answers come back in any order, and a window's first to come is not the
// first the service counted: the share is measured from the most remaining
// any answer announced, whatever the order.
func TestGate_measuresItsShareWhateverTheOrderOfAnswers(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	counted := []int{95, 90, 85, 80, 75} // its own, four others' between each
	for turn := range 2 * len(counted) {
		order := append(counted[turn%len(counted):], counted[:turn%len(counted)]...)
		if turn >= len(counted) {
			slices.Reverse(order)
		}
		g := &gate{}
		for _, remaining := range order {
			g.done(http.Header{"X-Ratelimit-Remaining": {strconv.Itoa(remaining)}, "X-Ratelimit-Reset": {"5"}}, false, now, now)
		}
		if math.Abs(g.share-0.2) > 1e-9 {
			t.Errorf("answers in the order %v: share %.3f, want a fifth", order, g.share)
		}
	}
}

// A gate held to a small share takes the quota back when the others stop.
// Its answers in a window are counted from the window's limit and weighed
// against the share it began the window with, so that its first answer
// tells it how much of the fall is its own; with its share measured only
// once the count fell shareFall, a gate let one request go a window might
// never measure it again.
func TestGate_takesTheQuotaBackWhenTheOthersStop(t *testing.T) {
	t.Parallel()
	s := newQuotaService(100, 2*time.Second, 0, "discord")
	now := time.Unix(1_800_000_000, 0).Add(100 * time.Millisecond)
	a, b := &countedGate{maxWait: time.Minute}, &countedGate{maxWait: time.Minute}
	now = send(a, s, now)
	for range 60 {
		now = send(b, s, now)
	}
	now = send(a, s, now)
	if !a.crowded() || a.share > 0.1 {
		t.Fatalf("share %.3f: want a small one", a.share)
	}
	// b has stopped. a's 40 go ten at a time, each answered 200 ms after
	// it goes: alone, they would go at once in the next window, at 2 s.
	// a spreads its share of the next window, growing as it sees the fall
	// is its own, and is alone in the one after.
	took, refused := plan(s, a, 40, 10, 200*time.Millisecond, now)
	if end := now.Add(took); refused > 0 || end.After(time.Unix(1_800_000_006, 0)) {
		t.Fatalf("alone after the others stopped, 40 requests ended at %s, %d refused: want them all within the next two windows, by 6 s", end.Format("05.000"), refused)
	}
}

// On a quota of a long window, far above what the runs need, runs that
// share nothing go at once. Two runs of 300 requests each behind 5,000 an
// hour, and a run alone after others spent 1,000 of it, each take seconds:
// a crowded gate spreads its share over the time to the reset only as far
// as it would wait (maxWait), and one that began in a window others spent
// takes that fall as theirs only until its own answers say otherwise.
func TestGate_aLongWindowIsNotSpreadOverItsLength(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_800_000_000, 0).Add(100 * time.Millisecond)
	s := newQuotaService(5000, time.Hour, 0, "github")
	a, b := &countedGate{maxWait: time.Minute}, &countedGate{maxWait: time.Minute}
	na, nb := start, start
	for range 300 {
		na, nb = send(a, s, na), send(b, s, nb)
	}
	if !a.crowded() || na.Sub(start) > 20*time.Second || nb.Sub(start) > 20*time.Second {
		t.Errorf("two runs of 300, shares %.2f and %.2f: took %s and %s, want at most 20 s", a.share, b.share, na.Sub(start), nb.Sub(start))
	}
	s = newQuotaService(5000, time.Hour, 0, "github")
	earlier, g := &countedGate{maxWait: time.Minute}, &countedGate{maxWait: time.Minute}
	now := start
	for range 1000 {
		now = send(earlier, s, now)
	}
	from := now
	for range 300 {
		now = send(g, s, now)
	}
	if took := now.Sub(from); took > 20*time.Second {
		t.Errorf("a run after others spent 1,000: 300 took %s, share %.2f, want at most 20 s", took, g.share)
	}
}

// A run that begins in a window others spent before it goes at once when
// they have ended, as runs one after another in CI do: its first answer
// makes it guess they still spend, and its second, sent at once, says
// nobody spent beside it.
func TestGate_aRunAfterOthersGoesAtOnce(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{2 * time.Second, 10 * time.Second, time.Minute} {
		for _, before := range []int{10, 60} {
			s := newQuotaService(100, window, 0, "discord")
			now := time.Unix(1_800_000_000, 0).Add(100 * time.Millisecond)
			earlier, g := &countedGate{maxWait: 30 * time.Second}, &countedGate{maxWait: 30 * time.Second}
			for range before {
				now = send(earlier, s, now)
			}
			// 40 requests, ten at a time, each answered 20 ms after it
			// goes: at once, they take 80 ms.
			if took, refused := plan(s, g, 40, 10, 20*time.Millisecond, now); took > 150*time.Millisecond || refused > 0 {
				t.Errorf("window %s, %d spent before: 40 took %s, %d refused; want at once, some 80 ms and one round trip", window, before, took, refused)
			}
		}
	}
}
