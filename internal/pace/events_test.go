package pace

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestPacer_eventsRetellTheModel: each change of the model is one event,
// as it happens and in order: the cut (from what, to what, measured how),
// probing begun and ended, a pause the service asked for.
func TestPacer_eventsRetellTheModel(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 0, time.Minute)
	next := func(after time.Duration, a Answer) {
		t.Helper()
		clock.now = clock.now.Add(after)
		tk, _, ok := p.reserveOK(clock.now)
		if !ok {
			t.Fatalf("a request %v after the last waits", after)
		}
		p.Done(tk, a)
		p.Release(tk)
	}
	next(0, Answer{Refused: true})                                        // the cut
	next(time.Second, Answer{Refused: true})                              // refused since the cut: probing
	next(time.Minute, Answer{})                                           // the probe accepted
	next(time.Second, Answer{Refused: true, RetryAfter: 5 * time.Second}) // a pause, and a cut
	events := p.Events()
	var said []string
	for _, e := range events {
		said = append(said, e.Message)
	}
	want := []string{"the pace was cut", "probing it", "probing ends", "asked for a pause", "the pace was cut"}
	if len(said) != len(want) {
		t.Fatalf("events %q: want %q", said, want)
	}
	for i := range want {
		if !strings.Contains(said[i], want[i]) {
			t.Fatalf("events %q: want %q", said, want)
		}
	}
	cut := events[0].Fields
	if to, _ := cut["to_per_second"].(float64); cut["from_per_second"] != float64(StartRate) || cut["measured"] == nil || to >= StartRate {
		t.Errorf("the first cut says %v: want from the start's %d a second, lower", cut, StartRate)
	}
	if pause := events[3].Fields; pause["retry_after_ms"] != int64(5000) {
		t.Errorf("the pause says %v", pause)
	}
	if p.Events() != nil {
		t.Error("events told twice")
	}
}

// TestPacer_aCutTellsARateItMeasured: a cut after probing, within the
// first second, when nothing accepted over a second can be measured yet,
// says it measured the pace, not a rate of no bound.
func TestPacer_aCutTellsARateItMeasured(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 0, time.Minute)
	for _, a := range []Answer{{Refused: true}, {Refused: true}, {}, {Refused: true}} { // cut, probe, accepted, cut
		tk, wait, ok := p.reserveOK(clock.now)
		for !ok && clock.now.Sub(time.Unix(1_800_000_000, 0)) < time.Second {
			clock.now = clock.now.Add(wait)
			tk, wait, ok = p.reserveOK(clock.now)
		}
		if !ok {
			t.Fatalf("a request did not go within the first second")
		}
		p.Done(tk, a)
		p.Release(tk)
	}
	var cuts []map[string]any
	for _, e := range p.Events() {
		if strings.Contains(e.Message, "the pace was cut") {
			cuts = append(cuts, e.Fields)
		}
	}
	if len(cuts) != 2 {
		t.Fatalf("%d cuts: want 2", len(cuts))
	}
	m := cuts[1]
	if what, _ := m["measured"].(string); m["measured_per_second"] != m["from_per_second"] || !strings.HasPrefix(what, "the pace") {
		t.Errorf("the cut after probing says %v: want the pace measured", m)
	}
}

// TestPacer_waitedSaysWhatHeldARequest: Wait's ticket counts its wait under
// what held it: the pace's token, a pause.
func TestPacer_waitedSaysWhatHeldARequest(t *testing.T) {
	clock := &leapClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 10, time.Minute) // a ceiling of 10 a second
	var got []Waited
	for range 2 {
		tk, err := p.Wait(bg)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tk.Waited())
		p.Done(tk, Answer{})
		p.Release(tk)
	}
	tk, _ := p.Wait(bg)
	p.Done(tk, Answer{Refused: true, RetryAfter: 3 * time.Second}) // a pause
	p.Release(tk)
	tk, err := p.Wait(bg)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, tk.Waited())
	if got[0].Total() != 0 || got[1][HoldPace] != 100*time.Millisecond || got[1].Total() != got[1][HoldPace] ||
		got[2][HoldPause] != 3*time.Second {
		t.Fatalf("waited %v: want nothing, a tenth of a second for the pace, then the pause's 3 s", got)
	}
}

// A rate with no bound is -1 in an event's fields, as JSON has no infinity.
func TestRateField(t *testing.T) {
	for in, want := range map[float64]float64{math.Inf(1): -1, 12.345: 12.35, 0: 0} {
		if got := rateField(in); got != want {
			t.Errorf("rateField(%v) = %v, want %v", in, got, want)
		}
	}
}

// leapClock is virtual time for one waiter: whatever it waits for has
// passed at once.
type leapClock struct{ now time.Time }

func (c *leapClock) Now() time.Time { return c.now }

func (c *leapClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}
