package schedule

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// wall is the clock, which synctest makes virtual.
type wall struct{}

func (wall) Now() time.Time                         { return time.Now() }
func (wall) After(d time.Duration) <-chan time.Time { return time.After(d) }

// counted counts a store's takes and reads, each step a round trip of
// trip (half of it each way) in virtual time.
type counted struct {
	Store
	trip         time.Duration
	takes, reads atomic.Int64
	slots        atomic.Int64 // given by takes
	fail         error
}

func (c *counted) Step(ctx context.Context, a Ask) (Word, error) {
	switch a.Kind {
	case Take:
		c.takes.Add(1)
	case Read:
		c.reads.Add(1)
	}
	if c.fail != nil {
		return Word{}, c.fail
	}
	time.Sleep(c.trip / 2)
	defer time.Sleep(c.trip / 2)
	w, err := c.Store.Step(ctx, a)
	if err == nil && a.Kind == Take {
		c.slots.Add(int64(a.N))
	}
	return w, err
}

// config is the Takers' of these tests: words fresh for 30 ms, and the
// store left alone a second after a failure, up to 4.
var config = Config{Fresh: 30 * time.Millisecond, StepWait: 250 * time.Millisecond, Away: time.Second, AwayMost: 4 * time.Second}

// paced is a schedule in memory at gap, counted, and a Taker of it.
func paced(t *testing.T, gap time.Duration) (*counted, *Taker) {
	t.Helper()
	m := &counted{Store: NewMemory(time.Now)}
	if _, err := m.Step(context.Background(), Ask{Kind: Learn, Gap: gap, Learnt: []byte("pace")}); err != nil {
		t.Fatal(err)
	}
	return m, NewTaker(m, wall{}, config)
}

// sendAll has n requests wait on tk at once, and returns when each went,
// in order.
func sendAll(t *testing.T, tk *Taker, n int) []time.Duration {
	t.Helper()
	start := time.Now()
	var mu sync.Mutex
	var went []time.Duration
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := tk.Wait(context.Background()); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			went = append(went, time.Since(start))
			mu.Unlock()
		})
	}
	wg.Wait()
	return went
}

func TestTaker_requestsWaitingAtOnceShareOneTake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, tk := paced(t, 10*time.Millisecond)
		m.trip = 2 * time.Millisecond
		went := sendAll(t, tk, 10)
		// One take, or two when the first request's take is under way
		// before the others come: they share the next.
		if got := m.takes.Load(); got > 2 {
			t.Errorf("%d takes for ten requests waiting at once, want at most 2", got)
		}
		// The first slot is due when the take reaches the store, and goes
		// when its answer is back, half a trip later; the rest on time.
		if went[0] != m.trip || went[1] != 11*time.Millisecond {
			t.Errorf("the first two went at %v, want 2 ms and 11 ms", went[:2])
		}
		for i := 2; i < len(went); i++ {
			if d := went[i] - went[i-1]; d != 10*time.Millisecond {
				t.Errorf("requests %d and %d went %s apart, want 10 ms: %v", i-1, i, d, went)
			}
		}
		// Each slot after the first is due later than Fresh after the
		// take: the ones due past it read once each, all waiting then.
		if got := m.reads.Load(); got < 1 || got > 7 {
			t.Errorf("%d reads for slots up to 90 ms ahead with words fresh for 30 ms", got)
		}
	})
}

func TestTaker_runsShareTheSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, a := paced(t, 10*time.Millisecond)
		b := NewTaker(m, wall{}, config)
		var wg sync.WaitGroup
		var mu sync.Mutex
		start := time.Now()
		var went []time.Duration
		for _, tk := range []*Taker{a, b, a, b, a, b} {
			wg.Go(func() {
				if _, err := tk.Wait(context.Background()); err != nil {
					t.Error(err)
				}
				mu.Lock()
				went = append(went, time.Since(start))
				mu.Unlock()
			})
		}
		wg.Wait()
		for i, d := range went {
			if want := time.Duration(i) * 10 * time.Millisecond; d != want {
				t.Errorf("the fleet's request %d went after %s, want %s: %v", i, d, want, went)
			}
		}
	})
}

func TestTaker_aSlotGivenUpIsKeptForTheNextRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, tk := paced(t, 100*time.Millisecond)
		_ = sendAll(t, tk, 1) // slot 0 went: slot 1 is due in 100 ms
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := tk.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a request that gave up: %v", err)
		}
		start := time.Now()
		if _, err := tk.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Errorf("the next request went after %s, want 50 ms, at the slot given up", d)
		}
		if got := m.takes.Load(); got != 2 {
			t.Errorf("%d takes, want 2: the slot given up is not taken again", got)
		}
	})
}

func TestTaker_aCutReachesHeldSlotsBeforeTheyGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, tk := paced(t, 10*time.Millisecond)
		var heard []string
		tk.cfg.News = func(_ int64, l []byte) { heard = append(heard, string(l)) }
		other := NewTaker(m, wall{}, config)
		_ = sendAll(t, other, 1) // the other run knows version 1
		done := make(chan []time.Duration)
		go func() { done <- sendAll(t, tk, 8) }()
		time.Sleep(25 * time.Millisecond) // slots 1, 2 and 3 went
		if saved, err := other.Learn(50*time.Millisecond, 0, time.Time{}, []byte("cut")); err != nil || !saved {
			t.Fatalf("the other run's cut: %v, %v", saved, err)
		}
		went := <-done
		// Slot 3, due at 30 ms by the word of the take, goes within Fresh
		// of it, unread, at the old pace. Slot 4 is read first: the cut
		// placed slot 3 50 ms after slot 2 (70 ms), so slot 4 follows at
		// 120 ms, and the rest 50 ms apart.
		var want []time.Duration
		for _, ms := range []int{10, 20, 30, 120, 170, 220, 270, 320} {
			want = append(want, time.Duration(ms)*time.Millisecond)
		}
		if !slices.Equal(went, want) {
			t.Errorf("went at %v, want %v", went, want)
		}
		if !slices.Equal(heard, []string{"pace", "cut"}) {
			t.Errorf("news heard: %q, want the first pace and the cut, each once", heard)
		}
	})
}

// A pause another run learnt moves the slots held and not yet due past
// its end, at the gap: those within Fresh of the last word go unread, the
// rest after it, one gap apart rather than all at once.
func TestTaker_aPauseReachesHeldSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, tk := paced(t, 10*time.Millisecond)
		other := NewTaker(m, wall{}, config)
		_ = sendAll(t, other, 1) // slot 0, at 0
		done := make(chan []time.Duration)
		go func() { done <- sendAll(t, tk, 5) }() // slots 1 to 5, from 10 ms
		time.Sleep(15 * time.Millisecond)
		if saved, err := other.Learn(10*time.Millisecond, -1, time.Now().Add(200*time.Millisecond), []byte("pause")); err != nil || !saved {
			t.Fatalf("the pause: %v, %v", saved, err)
		}
		// Slot 2, the first not yet due at 15 ms, goes at 215 ms by the
		// schedule; slots 2 and 3 are within Fresh of the take's word and
		// go at 20 and 30 ms; 4 is read first, and goes at 235 ms.
		var want []time.Duration
		for _, ms := range []int{10, 20, 30, 235, 245} {
			want = append(want, time.Duration(ms)*time.Millisecond)
		}
		if went := <-done; !slices.Equal(went, want) {
			t.Errorf("went at %v, want %v", went, want)
		}
	})
}

func TestTaker_aStoreThatFailsFailsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, tk := paced(t, 10*time.Millisecond)
		m.fail = errors.New("away")
		if _, err := tk.Wait(context.Background()); err == nil || err.Error() != "away" {
			t.Errorf("a take that failed: %v", err)
		}
	})
}

// A store that failed is left alone for Away, doubled with each failure
// in a row up to AwayMost: the requests meanwhile fail at once, asking
// nothing; the first after it asks, and one that passes ends the
// back-off.
func TestTaker_aStoreThatFailedIsLeftAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, tk := paced(t, 10*time.Millisecond)
		m.fail = errors.New("refused")
		failAt := func(after time.Duration) (asked bool, err error) {
			time.Sleep(after)
			before := m.takes.Load()
			_, err = tk.Wait(context.Background())
			return m.takes.Load() > before, err
		}
		for i, row := range []struct {
			after time.Duration
			asked bool
		}{
			{0, true},                        // fails: left alone for 1 s
			{999 * time.Millisecond, false},  // still alone
			{time.Millisecond, true},         // asked again, fails: 2 s
			{1999 * time.Millisecond, false}, //
			{time.Millisecond, true},         // 4 s, AwayMost
			{4 * time.Second, true},          // 4 s again, no more
			{3999 * time.Millisecond, false}, //
		} {
			asked, err := failAt(row.after)
			if asked != row.asked || err == nil {
				t.Fatalf("request %d: asked the store %v (%v), want %v", i, asked, err, row.asked)
			}
			if !asked && (!errors.Is(err, ErrAway) || !strings.Contains(err.Error(), "refused")) {
				t.Errorf("request %d while the store is left alone: %v, want ErrAway with the failure", i, err)
			}
		}
		m.fail = nil
		if asked, err := failAt(time.Millisecond); !asked || err != nil {
			t.Fatalf("once the back-off passed: asked %v, %v; want a take", asked, err)
		}
		m.fail = errors.New("refused")
		if asked, _ := failAt(0); !asked {
			t.Fatal("a failure after a success: not asked")
		}
		if asked, _ := failAt(time.Second); !asked {
			t.Error("a failure after a success left the store alone past Away: the back-off did not start again")
		}
	})
}

// The answers a run heard ride on its next step, or on a read of their
// own, and the fleet's count comes back with every word; acceptances a
// second old are not told, and a step that failed tells nothing twice.
func TestTaker_answersRideTheNextStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, a := paced(t, 10*time.Millisecond)
		a.cfg.Away = 0 // its failed step below leaves the store to it at once
		b := NewTaker(m, wall{}, config)
		a.Heard(false)
		time.Sleep(1100 * time.Millisecond)
		a.Heard(false)
		a.Heard(true)
		a.Heard(false)
		a.Heard(true)
		a.Heard(true)
		b.Heard(false)
		if m.takes.Load() != 0 {
			t.Fatal("hearing an answer stepped")
		}
		_ = sendAll(t, a, 1)
		if w := a.Last(); w.Accepted != 2 || w.InARow != 2 || w.Most != 2 {
			t.Errorf("after a's take: %d accepted, %d refused in a row, most %d; want 2 (the one a second old dropped), 2 and 2", w.Accepted, w.InARow, w.Most)
		}
		_ = sendAll(t, b, 1)
		if w := b.Last(); w.Accepted != 3 || w.InARow != 0 || w.Most != 2 {
			t.Errorf("after b's take: %d accepted, %d refused in a row, most %d; want 3, 0 and 2", w.Accepted, w.InARow, w.Most)
		}
		a.Heard(false)
		m.fail = errors.New("away")
		if _, err := a.Wait(context.Background()); err == nil {
			t.Fatal("a take that failed went")
		}
		m.fail = nil
		_ = sendAll(t, a, 1)
		if w := a.Last(); w.Accepted != 3 {
			t.Errorf("after a failed step and a take: %d accepted, want 3: the answer the failed step carried is not told again", w.Accepted)
		}
		time.Sleep(time.Second)
		_ = sendAll(t, b, 1)
		if w := b.Last(); w.Accepted != 0 {
			t.Errorf("a second later: %d accepted, want 0", w.Accepted)
		}
		// With no step of its own to come, a run tells its answers in a
		// read, TellWithin after the first.
		reads := m.reads.Load()
		a.Heard(false)
		time.Sleep(TellWithin / 2)
		a.Heard(false)
		time.Sleep(TellWithin / 2)
		synctest.Wait()
		if got := m.reads.Load() - reads; got != 1 {
			t.Errorf("%d reads to tell two answers, want 1", got)
		}
		if w := a.Last(); w.Accepted != 2 || w.First != -1 {
			t.Errorf("the read that told them: %+v, want 2 accepted", w)
		}
	})
}

// A run's pace grows with the time the schedule was busy: each take sets
// the gap its pace gives, and the slots not yet due follow it.
func TestTaker_takesSetThePaceAsItGrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := paced(t, 20*time.Millisecond)
		m.trip = time.Millisecond
		cfg := config
		cfg.Gap = func(busy time.Duration) time.Duration {
			if busy < 100*time.Millisecond {
				return 20 * time.Millisecond
			}
			return 10 * time.Millisecond
		}
		tk := NewTaker(m, wall{}, cfg)
		var went []time.Duration
		start := time.Now()
		for range 20 { // one walker: a take per request, each after the last went
			if _, err := tk.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			went = append(went, time.Since(start))
			time.Sleep(5 * time.Millisecond) // its read
		}
		first, last := went[2]-went[1], went[19]-went[18]
		if first != 20*time.Millisecond || last != 10*time.Millisecond {
			t.Errorf("requests went %s apart at first and %s at last, want 20 ms then 10 ms: %v", first, last, went)
		}
	})
}

// A run that stops holding slots wastes them at their own times and no
// later: the other runs' requests after them go as soon as those slots
// have passed, with no liveness to wait for.
func TestTaker_aStoppedRunsSlotsPassAtTheirTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, alive := paced(t, 10*time.Millisecond)
		stopped := NewTaker(m, wall{}, config)
		ctx, stop := context.WithCancel(context.Background())
		var gone sync.WaitGroup
		for range 3 { // slot 0 goes; 1 and 2 are held as the run stops
			gone.Go(func() { _, _ = stopped.Wait(ctx) })
		}
		synctest.Wait()
		stop()
		gone.Wait()
		start := time.Now()
		s, err := alive.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.Index != 3 || time.Since(start) != 30*time.Millisecond {
			t.Errorf("the next run's request took slot %d after %s, want slot 3 after 30 ms", s.Index, time.Since(start))
		}
	})
}

// A slot given up long ago has passed: the next request takes a new one
// rather than send at once, in a burst.
func TestTaker_aSpareSlotPastFreshIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, tk := paced(t, 10*time.Millisecond)
		_ = sendAll(t, tk, 1) // slot 0
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		if _, err := tk.Wait(ctx); err == nil { // slot 1, due at 10 ms, given up
			t.Fatal("a request that gave up went")
		}
		time.Sleep(time.Second)
		s, err := tk.Wait(context.Background())
		if err != nil || s.Index != 2 {
			t.Errorf("after a second, took slot %d (%v), want a new one, 2", s.Index, err)
		}
		if got := m.takes.Load(); got != 3 {
			t.Errorf("%d takes, want 3", got)
		}
	})
}
