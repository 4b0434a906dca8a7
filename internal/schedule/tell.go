package schedule

import (
	"slices"
	"time"
)

// The answers a run heard, held for its next step to tell (Taker).

// TellWithin is the longest an answer waits for a step to tell it: a
// tenth of a second, the fleet's count's grain.
const TellWithin = Tenths * time.Microsecond

// Heard counts the service's answer to one of this run's requests, for
// the next step to tell, within TellWithin.
func (t *Taker) Heard(refused bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	if refused {
		t.refused++
		t.tail++
	} else {
		t.dropOld(now)
		t.accepted = append(t.accepted, now)
		t.tail = 0
	}
	t.toTell(now)
}

// HeardQuota counts a quota an answer announced: left remaining until
// reset, by this run's clock. Of the latest window, the least is told.
func (t *Taker) HeardQuota(left int, reset time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch r := t.quotaReset; {
	case reset.IsZero():
		return
	case r.IsZero(), !reset.Before(r.Add(SameWindow * time.Microsecond)):
		t.quotaLeft, t.quotaReset = left, reset
	case reset.After(r.Add(-SameWindow * time.Microsecond)):
		t.quotaLeft = min(t.quotaLeft, left)
	default:
		return // an older window's
	}
	t.toTell(t.clock.Now())
}

// toTell holds what was heard at now for a step to tell, within
// TellWithin. t.mu is held.
func (t *Taker) toTell(now time.Time) {
	if t.untold.IsZero() {
		t.untold = now
	}
	if !t.telling {
		t.telling = true
		go t.tellLater()
	}
}

// tellLater tells the answers held in a read of their own, once
// TellWithin has passed since the first came, unless a step told them
// first.
func (t *Taker) tellLater() {
	for {
		t.mu.Lock()
		if t.untold.IsZero() {
			t.telling = false
			t.mu.Unlock()
			return
		}
		wait := t.untold.Add(TellWithin).Sub(t.clock.Now())
		if wait <= 0 {
			t.telling = false
			known := t.word.Version
			t.mu.Unlock()
			_, _ = t.step(Ask{Kind: Read, Known: known})
			return
		}
		t.mu.Unlock()
		<-t.clock.After(wait)
	}
}

// answers are the answers to tell at now, taken from those held. t.mu
// is held.
func (t *Taker) answers(now time.Time) Answers {
	t.dropOld(now)
	a := Answers{Accepted: int64(len(t.accepted)), Refused: t.refused, Tail: t.tail}
	if !t.quotaReset.IsZero() {
		a.QuotaLeft, a.QuotaReset = int64(t.quotaLeft), t.quotaReset.Add(t.offset).UnixMicro()
	}
	t.accepted, t.refused, t.tail, t.untold = t.accepted[:0], 0, 0, time.Time{}
	t.quotaLeft, t.quotaReset = 0, time.Time{}
	return a
}

// dropOld drops the acceptances held that are more than a second old at
// now: the fleet counts the last second's, so they are never told. t.mu
// is held.
func (t *Taker) dropOld(now time.Time) {
	i, _ := slices.BinarySearchFunc(t.accepted, now.Add(-time.Second), time.Time.Compare)
	t.accepted = t.accepted[i:]
}

// Quota is the announced quota as the fleet last told it: the least
// remaining any run heard of its latest window, and that window's reset
// by this run's clock; ok false when none was told.
func (t *Taker) Quota() (left int, reset time.Time, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.word.QuotaReset <= 0 {
		return 0, time.Time{}, false
	}
	return int(t.word.QuotaLeft), time.UnixMicro(t.word.QuotaReset).Add(-t.offset), true
}
