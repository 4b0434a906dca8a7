package ratelimit

import (
	"net/http"
	"testing"
	"time"
)

var second = time.Date(2026, 11, 23, 12, 0, 3, 0, time.UTC)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	for wait, want := range map[time.Duration]time.Duration{
		0:                       time.Second,
		time.Millisecond:        time.Second,
		time.Second:             time.Second,
		1001 * time.Millisecond: 2 * time.Second,
	} {
		if got := RetryAfter(wait); got != want {
			t.Errorf("RetryAfter(%s) = %s, want %s", wait, got, want)
		}
	}
}

// A bucket refuses once its burst is spent, says when the next token
// comes, and a refusal takes none.
func TestBucket(t *testing.T) {
	t.Parallel()
	b := NewBucket(10, 2)
	for i := range 2 {
		if _, ok := b.Take(second); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	for range 3 {
		if wait, ok := b.Take(second); ok || wait != 100*time.Millisecond {
			t.Fatalf("past the burst: accepted %v, wait %s; want refused, 100ms", ok, wait)
		}
	}
	if _, ok := b.Take(second.Add(100 * time.Millisecond)); !ok {
		t.Error("refused once a token came: the refusals took it")
	}
	b.SetRate(second.Add(100*time.Millisecond), 5)
	if wait, _ := b.Take(second.Add(100 * time.Millisecond)); b.Rate() != 5 || wait != 200*time.Millisecond {
		t.Errorf("halved: rate %v, wait %s; want 5, 200ms", b.Rate(), wait)
	}
}

// A queue lets requests through at the rate, delaying those that come
// sooner, and refuses one that would find burst waiting before it.
func TestQueued(t *testing.T) {
	t.Parallel()
	q := NewQueued(10, 2)
	for i, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond} {
		if delay, ok := q.Take(second); !ok || delay != want {
			t.Fatalf("request %d: accepted %v after %s; want accepted after %s", i+1, ok, delay, want)
		}
	}
	if _, ok := q.Take(second); ok {
		t.Fatal("accepted with two waiting before it, past a burst of 2")
	}
	if delay, ok := q.Take(second.Add(100 * time.Millisecond)); !ok || delay != 200*time.Millisecond {
		t.Errorf("once one went: accepted %v after %s; want accepted after 200ms, the refusal taking no place", ok, delay)
	}
}

// A fixed window counts per wall-clock second, and when spent says how long
// until the next one begins.
func TestFixedWindow(t *testing.T) {
	t.Parallel()
	var w FixedWindow
	for i := range 3 {
		if _, ok := w.Take(second.Add(time.Duration(100+i)*time.Millisecond), 3); !ok {
			t.Fatalf("request %d of 3 refused", i+1)
		}
	}
	if wait, ok := w.Take(second.Add(600*time.Millisecond), 3); ok || wait != 400*time.Millisecond {
		t.Errorf("the fourth in the same second: accepted %v, wait %v; want refused, 400ms", ok, wait)
	}
	if _, ok := w.Take(second.Add(time.Second), 3); !ok {
		t.Error("the first of the next second refused")
	}
}

// A rolling window counts the last second, whenever it began, and when
// spent says how long until its oldest request leaves it.
func TestRollingWindow(t *testing.T) {
	t.Parallel()
	var w RollingWindow
	start := second.Add(900 * time.Millisecond)
	for i := range 3 {
		if _, ok := w.Take(start.Add(time.Duration(i)*100*time.Millisecond), 3, false); !ok {
			t.Fatalf("request %d of 3 refused", i+1)
		}
	}
	// Past the wall-clock second: still within the last second.
	if wait, ok := w.Take(start.Add(500*time.Millisecond), 3, false); ok || wait != 500*time.Millisecond {
		t.Errorf("the fourth within a second: accepted %v, wait %v; want refused, 500ms", ok, wait)
	}
	if _, ok := w.Take(start.Add(1001*time.Millisecond), 3, false); !ok {
		t.Error("refused once the oldest left the last second")
	}
	if _, ok := w.Take(start.Add(1050*time.Millisecond), 3, false); ok {
		t.Error("accepted a fourth within the last second")
	}
}

// A rolling window that counts refused requests too stays shut while a
// client keeps sending, and its wait counts them.
func TestRollingWindow_countingRefusals(t *testing.T) {
	t.Parallel()
	var w RollingWindow
	for i := range 3 {
		if _, ok := w.Take(second.Add(time.Duration(i)*time.Millisecond), 3, true); !ok {
			t.Fatalf("request %d of 3 refused", i+1)
		}
	}
	if _, ok := w.Take(second.Add(900*time.Millisecond), 3, true); ok {
		t.Fatal("a fourth within the second accepted")
	}
	// Five are counted with this one: one more fits once three have left,
	// the third at 2 ms.
	if wait, ok := w.Take(second.Add(950*time.Millisecond), 3, true); ok || wait != 52*time.Millisecond {
		t.Errorf("a fifth: accepted %v, wait %s; want refused, 52ms", ok, wait)
	}
	// The first three have left the last second; the refused two have not.
	if _, ok := w.Take(second.Add(1500*time.Millisecond), 3, true); !ok {
		t.Error("refused with two refusals in the last second")
	}
	if _, ok := w.Take(second.Add(1501*time.Millisecond), 3, true); ok {
		t.Error("accepted a fourth, the refused ones counted")
	}
}

// In flight counts requests between Enter and Leave.
// HAProxy's rate: the period before weighs by the share of it still less
// than a period ago, refusals counted, so a burst keeps the rate shut into
// the next period; two periods on, it is forgotten.
func TestPeriodRate(t *testing.T) {
	t.Parallel()
	var r PeriodRate
	for i := range 4 {
		if _, ok := r.Take(second.Add(time.Duration(i)*time.Millisecond), 3, time.Second); ok != (i < 3) {
			t.Fatalf("request %d of a burst of 4 against 3: accepted %v", i+1, ok)
		}
	}
	// A quarter into the next period: 4 x 3/4 = 3 from before, and itself.
	if wait, ok := r.Take(second.Add(1250*time.Millisecond), 3, time.Second); ok || wait != 750*time.Millisecond {
		t.Errorf("a quarter on: accepted %v, wait %v; want refused, 750ms", ok, wait)
	}
	// Three quarters on: 4 x 1/4 = 1 from before, the one refused, and itself.
	if _, ok := r.Take(second.Add(1750*time.Millisecond), 3, time.Second); !ok {
		t.Error("refused three quarters into the next period")
	}
	// More than two periods on, nothing from before counts, and the
	// period begins anew: at 4.5 s, not on the grid of whole seconds.
	for i := range 3 {
		if _, ok := r.Take(second.Add(4500*time.Millisecond+time.Duration(i)*time.Millisecond), 3, time.Second); !ok {
			t.Errorf("request %d after two quiet periods refused", i+1)
		}
	}
	// At 5.2 s, still in the period begun at 4.5 s: a fourth is refused.
	// On the old grid it would be 3 x 0.8 from the period before, and go.
	if wait, ok := r.Take(second.Add(5200*time.Millisecond), 3, time.Second); ok || wait != 300*time.Millisecond {
		t.Errorf("a fourth in the period begun anew: accepted %v, wait %v; want refused, 300ms", ok, wait)
	}
}

func TestInFlight(t *testing.T) {
	t.Parallel()
	var l InFlight
	for i := range 2 {
		if !l.Enter(2) {
			t.Fatalf("request %d of 2 refused", i+1)
		}
	}
	if l.Enter(2) {
		t.Fatal("accepted a third")
	}
	l.Leave()
	if !l.Enter(2) {
		t.Error("refused after one left")
	}
}

// A quota counts in windows from its start, and announces what remains
// and when the window resets, in either family.
func TestQuota(t *testing.T) {
	t.Parallel()
	q := Quota{Limit: 2, Window: 2 * time.Second, Start: second.Add(300 * time.Millisecond)}
	at := second.Add(1800 * time.Millisecond)
	reset := second.Add(2300 * time.Millisecond)
	for i, want := range []int{1, 0, -1} {
		if remaining, r := q.Take(at); remaining != want || !r.Equal(reset) {
			t.Fatalf("request %d: %d remaining, reset %s; want %d, %s", i+1, remaining, r, want, reset)
		}
	}
	github, ietf := http.Header{}, http.Header{}
	q.Announce(github, "github", at, -1, reset)
	q.Announce(ietf, "ietf", at, -1, reset)
	for _, c := range []struct {
		h          http.Header
		name, want string
	}{
		{github, "X-RateLimit-Limit", "2"},
		{github, "X-RateLimit-Remaining", "0"},
		{github, "X-RateLimit-Reset", "1795435206"}, // 12:00:05.3, rounded up
		{ietf, "RateLimit-Policy", `"default";q=2;w=2`},
		{ietf, "RateLimit", `"default";r=0;t=1`},
	} {
		if got := c.h.Get(c.name); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if remaining, _ := q.Take(reset); remaining != 1 {
		t.Errorf("the next window: %d remaining, want 1", remaining)
	}
}

// An opened quota's window begins with the first request after the last
// one ended, wherever that falls, and none begins while nobody asks.
func TestQuota_opened(t *testing.T) {
	t.Parallel()
	q := Quota{Limit: 2, Window: 2 * time.Second, Opened: true}
	first := second.Add(700 * time.Millisecond)
	for i, c := range []struct {
		at        time.Duration // after first
		remaining int
		reset     time.Duration // after first
	}{
		{0, 1, 2 * time.Second},
		{time.Second, 0, 2 * time.Second},
		{1999 * time.Millisecond, -1, 2 * time.Second},
		{5300 * time.Millisecond, 1, 7300 * time.Millisecond}, // idle since the end
		{7299 * time.Millisecond, 0, 7300 * time.Millisecond},
		{7300 * time.Millisecond, 1, 9300 * time.Millisecond},
	} {
		remaining, reset := q.Take(first.Add(c.at))
		if remaining != c.remaining || !reset.Equal(first.Add(c.reset)) {
			t.Errorf("request %d: %d remaining, reset %s; want %d, %s", i+1, remaining, reset.Sub(first), c.remaining, c.reset)
		}
	}
}
