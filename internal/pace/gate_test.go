package pace

import (
	"fmt"
	"net/http"
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

func (g *countedGate) done(h http.Header, now time.Time) {
	g.inFlight--
	g.gate.done(h, now)
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
// (counted half way), through a gate in virtual time, every refused one
// sent again; it returns how long they took and how many were refused.
func plan(s *quotaService, n, conc int, rtt time.Duration, start time.Time) (took time.Duration, refused int) {
	clock := &fakeClock{now: start}
	g := &countedGate{maxWait: time.Minute}
	type answer struct {
		at       time.Time
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
			inFlight = append(inFlight, answer{clock.now.Add(rtt), ok, h})
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
		g.done(a.h, clock.now)
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
				took, refused := plan(s, 301, 8, rtt, start)
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
	g.done(http.Header{}, now)
	for range 20 {
		if wait := g.reserve(now); wait != 0 {
			t.Fatalf("held %s with nothing announced", wait)
		}
	}
	g.done(http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"5"}}, now)
	if wait := g.reserve(now); wait != 5*time.Second+resetMargin {
		t.Errorf("held %s for a reset 5 s away", wait)
	}
	g = &countedGate{maxWait: 30 * time.Second}
	g.reserve(now)
	g.done(http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(now.Add(time.Hour).Unix(), 10)}}, now)
	if wait := g.reserve(now); wait != 0 {
		t.Errorf("held %s for a reset an hour away", wait)
	}
}
