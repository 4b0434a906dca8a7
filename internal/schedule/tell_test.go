package schedule

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

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

// A quota a run heard rides on its next step, the least of the latest
// window, and every run's word carries the fleet's, by its own clock.
func TestTaker_aQuotaHeardReachesTheFleet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, a := paced(t, 10*time.Millisecond)
		b := NewTaker(m, wall{}, config)
		reset := time.Now().Add(2 * time.Second)
		a.HeardQuota(50, reset)
		a.HeardQuota(40, reset.Add(300*time.Millisecond)) // the same window, rounded otherwise
		a.HeardQuota(60, reset.Add(-3*time.Second))       // a window before: old news
		_ = sendAll(t, a, 1)
		_ = sendAll(t, b, 1)
		left, at, ok := b.Quota()
		if !ok || left != 40 || at.Sub(reset).Abs() > time.Millisecond {
			t.Fatalf("the fleet's quota as b heard it: %d until %s (%v), want 40 until %s", left, at, ok, reset)
		}
		time.Sleep(time.Second) // the answers told late
	})
}
