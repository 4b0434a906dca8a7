// Package schedule is the one timetable that the runs of a fleet send by
// when they share a pace: a queue of numbered slots, at the fleet's pace,
// kept where every run reaches it (Redis, a file), and what the fleet has
// learnt of the service, by version.
//
// The model. The schedule is a few numbers: the next slot no run holds,
// an anchor (a slot and the time it is due, in the store's clock) and the
// gap between two slots, so that slot i is due at anchor time plus
// (i - anchor slot) gaps; and beside them what was learnt (a record of the
// pace's own, opaque here) and its version. Three steps change or read it,
// each one atomic step of the store that sends and returns a few dozen
// bytes whatever the fleet's size:
//   - A take gives a run the next n slots, one for each request it has
//     waiting; a schedule idle long enough that its next slot is already
//     past is anchored at the store's now first. A take never fails for
//     another run's take: there is no version to lose.
//   - A read gives the anchor, the gap and the version: what a run holding
//     a slot needs to know when that slot is due now.
//   - A learn saves a new record, and a new gap, only if the version is
//     still the one the learner knew (compare-and-set): the rare change of
//     what is learnt (a cut on a refusal, a probe, a pause). It anchors the
//     schedule again at the first slot not yet due, so that the slots runs
//     hold but have not used are spaced again at the new gap: a slot is a
//     place in the queue, and its time is the schedule's.
//
// Every answer carries the store's now, the version and the anchor, and
// the learnt record when the run's version is not the current one: a run
// learns what another run saved with the answer of its next step, at no
// cost of its own. A slot's time is a run's reading of the anchor, so a
// cut reaches a run holding a slot before that slot goes if the run read
// the schedule after the cut (Taker: one small read before a slot due
// later than Fresh after the last word from the store).
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
}

// Due is when slot i is due, by the store's clock.
func (s *State) Due(i int64) int64 { return s.AnchorAt + (i-s.AnchorIdx)*s.Gap }

// Take gives the n slots from NextIdx, and returns the first; a schedule
// whose next slot is already past is anchored at now first.
func (s *State) Take(now, n int64) int64 {
	if s.Due(s.NextIdx) < now {
		s.AnchorIdx, s.AnchorAt = s.NextIdx, now
	}
	first := s.NextIdx
	s.NextIdx += max(n, 0)
	return first
}

// Learn saves learnt and gap as the next version if version is the
// current one, and anchors the schedule again at now: the first slot not
// yet due follows the last one due at the new gap, no earlier than now.
// It reports whether it saved.
func (s *State) Learn(now, version, gap int64, learnt []byte) bool {
	if version != s.Version {
		return false
	}
	idx, at := s.NextIdx, now
	if s.Gap > 0 && s.Due(s.NextIdx) >= now {
		// The first slot due at or after now.
		idx = s.AnchorIdx + ceilDiv(now-s.AnchorAt, s.Gap)
		idx = max(idx, s.AnchorIdx)
		at = max(now, s.Due(idx)-s.Gap+max(gap, 0))
	}
	s.AnchorIdx, s.AnchorAt = idx, at
	s.Gap = max(gap, 0)
	s.Version++
	s.Learnt = bytes.Clone(learnt)
	return true
}

// Word is one answer of the store: the schedule as the step left it, seen
// by a run that knew version Known.
type Word struct {
	Now       int64 // the store's clock at the step
	Version   int64
	Learnt    []byte // nil when the run already knew Version
	Gap       int64
	AnchorAt  int64
	AnchorIdx int64
	// First is the first slot a take gave (the rest follow it), or the
	// learn's outcome: 1 saved, 0 refused; -1 for a read.
	First int64
}

// Due is when slot i is due by the word.
func (w Word) Due(i int64) int64 { return w.AnchorAt + (i-w.AnchorIdx)*w.Gap }

// word is s's answer to a run that knew version known.
func (s *State) word(now, known, first int64) Word {
	w := Word{Now: now, Version: s.Version, Gap: s.Gap, AnchorAt: s.AnchorAt, AnchorIdx: s.AnchorIdx, First: first}
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
	Take(ctx context.Context, known int64, n int) (Word, error)
	Read(ctx context.Context, known int64) (Word, error)
	Learn(ctx context.Context, version int64, gap time.Duration, learnt []byte) (Word, error)
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
func (m *Memory) Take(_ context.Context, known int64, n int) (Word, error) {
	if n < 1 {
		return Word{}, errNone
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now().UnixMicro()
	first := m.s.Take(now, int64(n))
	return m.s.word(now, known, first), nil
}

// Read tells the schedule.
func (m *Memory) Read(_ context.Context, known int64) (Word, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.word(m.Now().UnixMicro(), known, -1), nil
}

// Learn saves learnt (State.Learn).
func (m *Memory) Learn(_ context.Context, version int64, gap time.Duration, learnt []byte) (Word, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now().UnixMicro()
	if m.s.Learn(now, version, gap.Microseconds(), learnt) {
		return m.s.word(now, m.s.Version, 1), nil
	}
	return m.s.word(now, version, 0), nil
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
