package schedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Clock is what a Taker needs of time (pace.Clock's methods), so that its
// tests run in virtual time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Taker is a run's side of a schedule: its requests wait here for their
// slots.
//
// Requests that wait at once share one take: while a take is under way,
// those that come wait for the next, which asks a slot for each of them.
// A slot whose request gave up before it went is kept for the next
// request of the run, not lost. Times are the store's: the Taker reads the
// store's clock off each word (its now, against the middle of the round
// trip here) and sends a slot when it is due by that clock. A slot that
// comes due more than Fresh after the last word from the store is sent
// only after a read (one for all the requests due then, a round trip
// ahead of the slot), so that a cut saved since reaches this run first:
// the fleet sends at most Fresh of slots at a pace it no longer keeps.
//
// The service's answers to the run's requests (Heard) ride on its next
// step, whatever it is, or on a read of their own once TellWithin has
// passed since the first of them came with no step (a run whose slots are
// far off, or that sends no more): the fleet counts in tenths of a second,
// and an answer counts at most one late. They are dropped if the step
// fails: the store may have counted them, and a count told twice says the
// service accepted more than it did.
//
// A step that fails (the store's error, or no answer within StepWait)
// leaves the store alone for Away, doubled with each failure in a row up
// to AwayMost: meanwhile every step fails at once with ErrAway, asking
// nothing (the answers heard wait for the step after), so that a store
// that is down costs a run's requests one StepWait per back-off, not one
// each. The first step after it asks again.
type Taker struct {
	store Store
	clock Clock
	cfg   Config

	mu      sync.Mutex
	word    Word          // the last word, its Learnt dropped
	heard   time.Time     // when it came
	offset  time.Duration // the store's clock less this one
	trip    time.Duration // the last step's round trip
	queue   []*waiter     // requests with no slot yet, first come first
	spare   []int64       // slots held by no request, lowest first
	taking  bool          // a take is under way
	reading chan struct{} // closed when the read under way ends; nil for none
	readErr error
	// The answers heard since the last step: when each acceptance came,
	// the refusals, and those since the last acceptance; when the first of
	// them came (zero for none), and whether a read waits to tell them.
	accepted      []time.Time
	refused, tail int64
	untold        time.Time
	telling       bool

	// The store is left alone until awayTil, after awayWhy, for awayFor;
	// the back-off began at awaySince.
	awayTil, awaySince time.Time
	awayFor            time.Duration
	awayWhy            error

	// newsMu orders the calls of news, which steps under way together
	// may come to out of order: told is the last version told.
	newsMu sync.Mutex
	told   int64
}

// Config is a Taker's.
type Config struct {
	// Fresh is how long a word from the store is taken to be current;
	// StepWait bounds each step's wait on the store.
	Fresh, StepWait time.Duration
	// Away is how long the store is left alone after a step failed,
	// doubled with each failure in a row up to AwayMost; 0 never leaves
	// it alone.
	Away, AwayMost time.Duration
	// News, when not nil, is called with what another run learnt, as the
	// word that carries it comes, outside the Taker's lock, one call at a
	// time, each version once and in order.
	News func(version int64, learnt []byte)
	// Gap, when not nil, is the gap this run's pace sets after the
	// schedule was busy for busy since the last learn: each take sets it,
	// the pace as it grew.
	Gap func(busy time.Duration) time.Duration
}

// ErrAway is a step the Taker did not ask of the store, left alone after
// a failure (Config.Away); it wraps that failure.
var ErrAway = errors.New("the schedule's store is left alone after a failure")

type waiter struct {
	slot  int64 // -1 until the take gives one
	err   error
	ready chan struct{} // closed when slot or err is set
	gone  bool          // the request gave up
}

// NewTaker waits on store's schedule by clock.
func NewTaker(store Store, clock Clock, cfg Config) *Taker {
	return &Taker{store: store, clock: clock, cfg: cfg}
}

// Version is the version of what was learnt as this run last heard it.
func (t *Taker) Version() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.word.Version
}

// Last is the last word from the store (its Learnt dropped): the
// schedule, and the fleet's answers, as last heard.
func (t *Taker) Last() Word {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.word
}

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
	t.accepted, t.refused, t.tail, t.untold = t.accepted[:0], 0, 0, time.Time{}
	return a
}

// dropOld drops the acceptances held that are more than a second old at
// now: the fleet counts the last second's, so they are never told. t.mu
// is held.
func (t *Taker) dropOld(now time.Time) {
	i, _ := slices.BinarySearchFunc(t.accepted, now.Add(-time.Second), time.Time.Compare)
	t.accepted = t.accepted[i:]
}

// Slot is a request's place in the schedule, and when it was due by this
// run's clock.
type Slot struct {
	Index int64
	Due   time.Time
}

// Wait returns when a slot of this run's is due: the slot, or the store's
// error (the request did not wait on the schedule), or ctx's.
func (t *Taker) Wait(ctx context.Context) (Slot, error) {
	slot, err := t.slot(ctx)
	if err != nil {
		return Slot{}, err
	}
	for {
		t.mu.Lock()
		due := t.local(slot)
		// A slot due later than Fresh after the last word is read a round
		// trip ahead of its time, so that it goes on time.
		stale := due.Sub(t.heard) > t.cfg.Fresh
		wait := due.Sub(t.clock.Now())
		if stale {
			wait -= t.trip
		}
		t.mu.Unlock()
		if wait > 0 {
			select {
			case <-t.clock.After(wait):
			case <-ctx.Done():
				t.handBack(slot)
				return Slot{}, ctx.Err()
			}
			continue
		}
		if !stale {
			return Slot{Index: slot, Due: due}, nil
		}
		if err := t.read(ctx); err != nil {
			t.handBack(slot)
			return Slot{}, err
		}
	}
}

// slot is a slot of this run's: a spare one, or one of the next take.
func (t *Taker) slot(ctx context.Context) (int64, error) {
	t.mu.Lock()
	// A spare slot due more than Fresh ago passed unused, as a slot of a
	// run that died: sent now, it would go in a burst.
	for len(t.spare) > 0 && t.clock.Now().Sub(t.local(t.spare[0])) > t.cfg.Fresh {
		t.spare = t.spare[1:]
	}
	if len(t.spare) > 0 {
		s := t.spare[0]
		t.spare = t.spare[1:]
		t.mu.Unlock()
		return s, nil
	}
	w := &waiter{slot: -1, ready: make(chan struct{})}
	t.queue = append(t.queue, w)
	if !t.taking {
		t.taking = true
		go t.take()
	}
	t.mu.Unlock()
	select {
	case <-w.ready:
		return w.slot, w.err
	case <-ctx.Done():
		t.mu.Lock()
		defer t.mu.Unlock()
		w.gone = true
		t.queue = slices.DeleteFunc(t.queue, func(q *waiter) bool { return q == w })
		if w.slot >= 0 {
			t.keep(w.slot)
		}
		return -1, ctx.Err()
	}
}

// take asks a slot for each request waiting, until none is.
func (t *Taker) take() {
	for {
		t.mu.Lock()
		asked := slices.Clone(t.queue)
		if len(asked) == 0 {
			t.taking = false
			t.mu.Unlock()
			return
		}
		known, gap := t.word.Version, time.Duration(-1)
		if t.cfg.Gap != nil {
			gap = t.cfg.Gap(time.Duration(t.word.Busy) * time.Microsecond)
		}
		t.mu.Unlock()
		w, err := t.step(Ask{Kind: Take, Known: known, N: len(asked), Gap: gap})
		t.mu.Lock()
		for i, q := range asked {
			switch {
			case q.gone && err == nil:
				t.keep(w.First + int64(i))
				continue
			case q.gone:
				continue
			case err == nil:
				q.slot = w.First + int64(i)
			}
			q.err = err
			close(q.ready)
		}
		t.queue = slices.DeleteFunc(t.queue, func(q *waiter) bool { return slices.Contains(asked, q) })
		t.mu.Unlock()
	}
}

// read asks the schedule again, once for all the requests that need it.
func (t *Taker) read(ctx context.Context) error {
	t.mu.Lock()
	done := t.reading
	if done == nil {
		done = make(chan struct{})
		t.reading = done
		known := t.word.Version
		go func() {
			_, err := t.step(Ask{Kind: Read, Known: known})
			t.mu.Lock()
			t.readErr, t.reading = err, nil
			t.mu.Unlock()
			close(done)
		}()
	}
	t.mu.Unlock()
	select {
	case <-done:
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.readErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Learn saves what this run learnt, the gap it sets, the busy its pace
// grows from (-1: goes on) and a pause (no slot not yet due goes before
// until, by this run's clock; zero for none), if no run saved since this
// one last heard: saved false when one did (and news has told what it
// saved).
func (t *Taker) Learn(gap, busy time.Duration, until time.Time, learnt []byte) (saved bool, err error) {
	t.mu.Lock()
	a := Ask{Kind: Learn, Known: t.word.Version, Gap: gap, Busy: busy, Learnt: learnt}
	if !until.IsZero() {
		a.Until = until.Add(t.offset).UnixMicro()
	}
	t.mu.Unlock()
	w, err := t.step(a)
	return err == nil && w.First == 1, err
}

// step runs a, with the answers heard since the last step, bounded by
// StepWait, and takes up its word; while the store is left alone, it
// fails with ErrAway, and keeps the answers.
func (t *Taker) step(a Ask) (Word, error) {
	ctx, cancel := context.WithTimeout(context.Background(), t.cfg.StepWait)
	defer cancel()
	sent := t.clock.Now()
	t.mu.Lock()
	if sent.Before(t.awayTil) {
		err := fmt.Errorf("%w until %s: %w", ErrAway, t.awayTil.Format(time.TimeOnly), t.awayWhy)
		t.mu.Unlock()
		return Word{}, err
	}
	a.Told = t.answers(sent)
	t.mu.Unlock()
	w, err := t.store.Step(ctx, a)
	came := t.clock.Now()
	t.mu.Lock()
	if err != nil {
		t.leaveAlone(sent, came, err)
		t.mu.Unlock()
		return w, err
	}
	t.awayFor = 0
	news := w.Learnt != nil && w.Version > t.word.Version
	learnt := w.Learnt
	// A word older than the last heard is not taken up: steps in flight
	// together may come back out of order.
	if w.Now >= t.word.Now {
		mid := sent.Add(came.Sub(sent) / 2)
		t.offset = time.UnixMicro(w.Now).Sub(mid)
		t.word, t.heard, t.trip = w, came, came.Sub(sent)
		t.word.Learnt = nil
	}
	t.mu.Unlock()
	if news && t.cfg.News != nil {
		t.newsMu.Lock()
		defer t.newsMu.Unlock()
		if w.Version > t.told {
			t.told = w.Version
			t.cfg.News(w.Version, learnt)
		}
	}
	return w, nil
}

// leaveAlone leaves the store alone from now, after a step sent at sent
// failed with err: for Away, doubled if the back-off began before the
// step was sent (one failure more in a row); steps sent before it began
// failed with it, and count once. t.mu is held.
func (t *Taker) leaveAlone(sent, now time.Time, err error) {
	if t.cfg.Away <= 0 || sent.Before(t.awaySince) {
		return
	}
	t.awayFor = min(max(2*t.awayFor, t.cfg.Away), max(t.cfg.AwayMost, t.cfg.Away))
	t.awaySince, t.awayTil, t.awayWhy = now, now.Add(t.awayFor), err
}

// local is when slot is due by this run's clock.
func (t *Taker) local(slot int64) time.Time {
	return time.UnixMicro(t.word.Due(slot)).Add(-t.offset)
}

// handBack keeps slot for the next request: its own gave up.
func (t *Taker) handBack(slot int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keep(slot)
}

// keep adds slot to the spare ones, in order.
func (t *Taker) keep(slot int64) {
	i, _ := slices.BinarySearch(t.spare, slot)
	t.spare = slices.Insert(t.spare, i, slot)
}
