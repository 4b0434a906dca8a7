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
// returns a few dozen bytes whatever the fleet's size (Ask, Word):
//   - A take gives a run the next n slots, one for each request it has
//     waiting; a schedule idle long enough that its next slot is already
//     past is anchored at the store's now first. A run that knows the
//     current version sets the gap with it: its pace as it grew with the
//     time the schedule was busy, which every run reads alike. A take
//     never fails for another run's take: there is no version to lose.
//   - A read gives the anchor, the gap and the version: what a run holding
//     a slot needs to know when that slot is due.
//   - A learn saves a new record, a new gap, where busy counts from and a
//     time before which no slot not yet due goes (a pause, a probe's
//     time), only if the version is still the one the learner knew
//     (compare-and-set): the rare change of what is learnt (a cut on a
//     refusal, a probe, a pause).
//
// A new gap, by a take or a learn, anchors the schedule again at the first
// slot not yet due, which follows the last one due at the new gap (or,
// after a learn's pause, comes when it ends): the slots runs hold but have
// not used are spaced again, as a slot is a place in the queue and its
// time is the schedule's. So a pause reaches every run's slots, and they
// go after it at the pace, not all at once as it ends. Every answer
// carries the store's now, the version, the anchor and busy, and the
// learnt record when the run's version is not the current one: a run
// learns what another run saved with the answer of its next step, at no
// cost of its own. A run holding a slot reads the schedule before the
// slot goes if its last word is too old (Taker), so a cut reaches it
// first.
//
// A run that dies holding slots wastes them: each is due at its time and
// passes unused, so no slot of a dead run is wasted past the time it was
// due. A run never holds more slots than it has requests waiting.
//
// The fleet's answers. What a pace learns from besides a refusal is what
// the service said to the fleet, not to one run: how many it accepted
// over the last second (what a cut falls back to) and how many it refused
// with none accepted between (a limit that counts over a span). Each step
// tells the schedule the answers its run heard since its last one
// (Answers); the schedule counts the accepted in tenths of a second of its
// clock, the refusals told since the last acceptance told, and the most a
// second accepted as a refusal was told, and each word carries the three.
// An answer counts when it is told, with its run's next step or within a
// tenth of a second (Taker): the counts lag the service by a tenth, and,
// as what a failed step carried is never told again, are never above
// what it answered.
package schedule

import (
	"bytes"
	"context"
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
	// The fleet's answers as told (Tell): Accepted in each tenth of a
	// second, Tenth the latest tenth counted (now / Tenths), the
	// refusals told since the last acceptance told, and the most a second
	// accepted as a refusal was told.
	Accepted     [10]int64
	Tenth        int64
	InARow, Most int64
}

// Tenths is a tenth of a second in microseconds: the accepted are counted
// in tenths, so the last second's are those of the last ten.
const Tenths = 100_000

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
// if version is the current one, with no slot not yet due going before
// until (0: none), and reports whether it saved.
func (s *State) Learn(now, version, gap, busy, until int64, learnt []byte) bool {
	s.count(now)
	if version != s.Version {
		return false
	}
	s.regap(now, max(gap, 0))
	s.AnchorAt = max(s.AnchorAt, until)
	if busy >= 0 {
		s.Busy = busy
	}
	s.Version++
	s.Learnt = bytes.Clone(learnt)
	return true
}

// Read counts Busy to now.
func (s *State) Read(now int64) { s.count(now) }

// Answers are what the service answered a run's requests since the run's
// last step: Tail of the Refused came after the last of the Accepted (all
// of them when none was accepted).
type Answers struct {
	Accepted, Refused, Tail int64
}

// Tell counts a run's answers at now: the accepted in now's tenth (those
// of tenths more than a second old dropped), and the refusals in a row,
// which an acceptance ends; a refusal takes the most a second accepted.
// Counts below 0 are none, and Tail at most Refused.
func (s *State) Tell(now int64, a Answers) {
	a.Accepted, a.Refused = max(a.Accepted, 0), max(a.Refused, 0)
	a.Tail = min(max(a.Tail, 0), a.Refused)
	tenth := now / Tenths
	for k := max(s.Tenth+1, tenth-9); k <= tenth; k++ {
		s.Accepted[k%10] = 0
	}
	// A clock that went back counts in the latest tenth.
	s.Tenth = max(s.Tenth, tenth)
	s.Accepted[s.Tenth%10] += a.Accepted
	if a.Refused > 0 {
		s.Most = max(s.Most, s.acceptedInASecond())
	}
	if a.Accepted > 0 {
		s.InARow = a.Tail
	} else {
		s.InARow += a.Refused
	}
}

func (s *State) acceptedInASecond() int64 {
	var n int64
	for _, a := range s.Accepted {
		n += a
	}
	return n
}

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

// Kind is a step's.
type Kind uint8

// The steps (package doc).
const (
	Read Kind = iota
	Take
	Learn
)

// Ask is one step a run asks of the store.
type Ask struct {
	Kind Kind
	// Known is the version the run last heard: a take's gap, and a
	// learn, count only when it is the current one.
	Known int64
	N     int           // a take's slots
	Gap   time.Duration // a take's gap (-1: it keeps the schedule's), or a learn's
	Busy  time.Duration // a learn's busy (-1: Busy goes on)
	// Until is a learn's pause: no slot not yet due goes before it, in
	// microseconds of the store's clock (0: none).
	Until int64
	// Learnt is what a learn saves.
	Learnt []byte
	// Told are the answers the run heard since its last step.
	Told Answers
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
	// The fleet's answers: accepted over the last second, refused in a
	// row, and the most a second accepted as a refusal was told.
	Accepted, InARow, Most int64
}

// Due is when slot i is due by the word.
func (w Word) Due(i int64) int64 { return w.AnchorAt + (i-w.AnchorIdx)*w.Gap }

// Step runs a at now, as every store does: the answers told first, then
// the step.
func (s *State) Step(now int64, a Ask) Word {
	s.Tell(now, a.Told)
	known, first := a.Known, int64(-1)
	switch a.Kind {
	case Take:
		first = s.Take(now, int64(a.N), a.Known, micros(a.Gap))
	case Learn:
		first = 0
		if s.Learn(now, a.Known, micros(a.Gap), micros(a.Busy), a.Until, a.Learnt) {
			first, known = 1, s.Version
		}
	default:
		s.Read(now)
	}
	w := Word{Now: now, Version: s.Version, Gap: s.Gap, AnchorAt: s.AnchorAt, AnchorIdx: s.AnchorIdx, Busy: s.Busy, First: first,
		Accepted: s.acceptedInASecond(), InARow: s.InARow, Most: s.Most}
	if known != s.Version {
		w.Learnt = bytes.Clone(s.Learnt)
		if w.Learnt == nil {
			w.Learnt = []byte{}
		}
	}
	return w
}

// Store keeps one schedule. Each step is atomic, and one round trip to a
// shared store.
type Store interface {
	Step(ctx context.Context, a Ask) (Word, error)
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

// Step runs a (State.Step).
func (m *Memory) Step(_ context.Context, a Ask) (Word, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.Step(m.Now().UnixMicro(), a), nil
}

// micros is d in microseconds, -1 (keep) for any d below 0.
func micros(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Microseconds()
}

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}
