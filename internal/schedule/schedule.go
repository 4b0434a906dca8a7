// Package schedule is the one timetable that the runs of a fleet send by
// when they share a pace: a queue of numbered slots, at the fleet's pace,
// kept where every run reaches it (Redis, a file), and what the fleet has
// learnt of the service, by version.
//
// The model. The schedule is a few numbers: the next slot no run holds,
// an anchor (a slot and the time it is due, in the store's clock) and the
// gap between two slots, so that slot i is due at the anchor's time plus
// (i - anchor) gaps; how long it was busy (slots given and not yet due:
// requests waited for the pace); and beside them what was learnt (a
// record of the pace's own, opaque here) and its version. Three steps
// change or read it, each one atomic step of the store that sends and
// returns a few dozen bytes whatever the fleet's size:
//   - A take gives a run the next n slots, one for each request it has
//     waiting; a schedule idle long enough that its next slot is already
//     past is anchored at the store's now first. A run that knows the
//     current version sets the gap with it: its pace as it grew with the
//     time the schedule was busy, which every run reads alike. A take
//     never fails for another run's take: there is no version to lose.
//   - A read gives the anchor, the gap and the version: what a run holding
//     a slot needs to know when that slot is due.
//   - A learn saves a new record, a new gap and where busy counts from,
//     only if the version is still the one the learner knew
//     (compare-and-set): the rare change of what is learnt (a cut on a
//     refusal, a probe, a pause).
//
// A new gap, by a take or a learn, anchors the schedule again at the first
// slot not yet due, which follows the last one due at the new gap: the
// slots runs hold but have not used are spaced again, as a slot is a place
// in the queue and its time is the schedule's. Every answer carries the
// store's now, the version, the anchor and busy, and the learnt record
// when the run's version is not the current one: a run learns what
// another run saved with the answer of its next step, at no cost of its
// own. A run holding a slot reads the schedule before the slot goes if its
// last word is too old (Taker), so a cut reaches it first.
//
// A run that dies holding slots wastes them: each is due at its time and
// passes unused, so no slot of a dead run is wasted past the time it was
// due. A run never holds more slots than it has requests waiting.
package schedule

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"
)

// State is a schedule as its store keeps it. Times are microseconds of
// the store's clock (Redis's TIME, a file store's wall clock); slots are
// numbered from 0.
type State struct {
	Version   int64  // the count of learns saved
	Learnt    []byte // what the last learn saved
	Gap       int64  // microseconds between two slots; 0 sends every slot at its anchor
	AnchorAt  int64  // when AnchorIdx is due
	AnchorIdx int64
	NextIdx   int64 // the first slot no run holds
	// Busy is how long the schedule had slots given but not yet due (its
	// requests waited for the pace), since the last learn set it: what a
	// pace grows by. LastAt is when a step last counted it.
	Busy, LastAt int64
}

// Due is when slot i is due, by the store's clock.
func (s *State) Due(i int64) int64 { return s.AnchorAt + (i-s.AnchorIdx)*s.Gap }

// Take gives the n slots from NextIdx, and returns the first. A run that
// knows the current version sets the gap (-1: it keeps it), as its pace
// has grown with Busy; a schedule whose next slot is already past is
// anchored at now.
func (s *State) Take(now, n, known, gap int64) int64 {
	s.count(now)
	if gap >= 0 && known == s.Version && gap != s.Gap {
		s.regap(now, gap)
	}
	if s.Due(s.NextIdx) < now {
		s.AnchorIdx, s.AnchorAt = s.NextIdx, now
	}
	first := s.NextIdx
	s.NextIdx += max(n, 0)
	return first
}

// Learn saves learnt, gap and busy (-1: Busy goes on) as the next version
// if version is the current one, and reports whether it saved.
func (s *State) Learn(now, version, gap, busy int64, learnt []byte) bool {
	s.count(now)
	if version != s.Version {
		return false
	}
	s.regap(now, max(gap, 0))
	if busy >= 0 {
		s.Busy = busy
	}
	s.Version++
	s.Learnt = bytes.Clone(learnt)
	return true
}

// Read counts Busy to now.
func (s *State) Read(now int64) { s.count(now) }

// count adds to Busy the time since the last step that slots were given
// and not yet due.
func (s *State) count(now int64) {
	if end := min(now, s.Due(s.NextIdx)); s.LastAt > 0 && end > s.LastAt {
		s.Busy += end - s.LastAt
	}
	s.LastAt = max(s.LastAt, now)
}

// regap anchors the schedule again at the first slot not yet due, which
// follows the last one due at the new gap, no earlier than now: the slots
// runs hold but have not used are spaced at the new gap. With no gap,
// every slot given is due at the anchor.
func (s *State) regap(now, gap int64) {
	idx, at := s.NextIdx, now
	switch {
	case s.Due(s.NextIdx) < now:
		// Idle: the next slot given is due now.
	case s.Gap == 0:
		idx, at = s.AnchorIdx, s.AnchorAt
	default:
		idx = max(s.AnchorIdx+ceilDiv(now-s.AnchorAt, s.Gap), s.AnchorIdx)
		at = max(now, s.Due(idx)-s.Gap+gap)
	}
	s.AnchorIdx, s.AnchorAt, s.Gap = idx, at, gap
}

// Word is one answer of the store: the schedule as the step left it, as
// the run that asked is told it.
type Word struct {
	Now       int64 // the store's clock at the step
	Version   int64
	Learnt    []byte // nil when the run already knew Version
	Gap       int64
	AnchorAt  int64
	AnchorIdx int64
	Busy      int64
	// First is the first slot a take gave (the rest follow it), or the
	// learn's outcome: 1 saved, 0 refused; -1 for a read.
	First int64
}

// Due is when slot i is due by the word.
func (w Word) Due(i int64) int64 { return w.AnchorAt + (i-w.AnchorIdx)*w.Gap }

// word is s's answer to a run that knew version known.
func (s *State) word(now, known, first int64) Word {
	w := Word{Now: now, Version: s.Version, Gap: s.Gap, AnchorAt: s.AnchorAt, AnchorIdx: s.AnchorIdx, Busy: s.Busy, First: first}
	if known != s.Version {
		w.Learnt = bytes.Clone(s.Learnt)
		if w.Learnt == nil {
			w.Learnt = []byte{}
		}
	}
	return w
}

// Store keeps one schedule. Its steps are atomic; each is one round trip
// to a shared store. known is the version the run last heard.
type Store interface {
	// Take gives n slots, and sets the gap (-1: keeps it) if known is
	// current (State.Take).
	Take(ctx context.Context, known int64, n int, gap time.Duration) (Word, error)
	Read(ctx context.Context, known int64) (Word, error)
	// Learn saves learnt, gap and busy (-1: goes on) if version is
	// current (State.Learn).
	Learn(ctx context.Context, version int64, gap, busy time.Duration, learnt []byte) (Word, error)
}

// Memory is a schedule in this process: for runs in one process, and for
// tests, in virtual time with Now.
type Memory struct {
	Now func() time.Time

	mu sync.Mutex
	s  State
}

// NewMemory is an empty schedule read by now.
func NewMemory(now func() time.Time) *Memory { return &Memory{Now: now} }

// Take gives n slots (State.Take).
func (m *Memory) Take(_ context.Context, known int64, n int, gap time.Duration) (Word, error) {
	if n < 1 {
		return Word{}, errNone
	}
	return m.step(func(s *State, now int64) Word { return s.take(now, known, n, gap) }), nil
}

// Read tells the schedule.
func (m *Memory) Read(_ context.Context, known int64) (Word, error) {
	return m.step(func(s *State, now int64) Word { return s.read(now, known) }), nil
}

// Learn saves learnt (State.Learn).
func (m *Memory) Learn(_ context.Context, version int64, gap, busy time.Duration, learnt []byte) (Word, error) {
	return m.step(func(s *State, now int64) Word { return s.learn(now, version, gap, busy, learnt) }), nil
}

func (m *Memory) step(f func(*State, int64) Word) Word {
	m.mu.Lock()
	defer m.mu.Unlock()
	return f(&m.s, m.Now().UnixMicro())
}

// take, read and learn are the steps as a store runs them, with their
// words.
func (s *State) take(now, known int64, n int, gap time.Duration) Word {
	return s.word(now, known, s.Take(now, int64(n), known, micros(gap)))
}

func (s *State) read(now, known int64) Word {
	s.Read(now)
	return s.word(now, known, -1)
}

func (s *State) learn(now, version int64, gap, busy time.Duration, learnt []byte) Word {
	if s.Learn(now, version, micros(gap), micros(busy), learnt) {
		return s.word(now, s.Version, 1)
	}
	return s.word(now, version, 0)
}

// micros is d in microseconds, -1 (keep) for any d below 0.
func micros(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Microseconds()
}

// errNone is a take of no slots, which no store is asked.
var errNone = errors.New("schedule: a take of no slots")

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}
