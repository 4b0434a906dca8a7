package schedule

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"time"
)

// Updater is a store that runs one step at a time on bytes it keeps, under
// a lock of its own (internal/paceshare: a file under a file lock, on one
// machine): f gets what was saved (nil for none), and what it returns is
// saved.
type Updater interface {
	Update(ctx context.Context, f func(saved []byte) ([]byte, error)) error
}

// Locked is a schedule kept as bytes by an Updater: the same steps as
// Redis's script, each under the store's lock, by the wall clock of the
// machine it shares.
type Locked struct {
	u   Updater
	now func() time.Time
}

// NewLocked is the schedule u keeps, by now's clock.
func NewLocked(u Updater, now func() time.Time) *Locked { return &Locked{u: u, now: now} }

// Step runs a under the store's lock (State.Step).
func (l *Locked) Step(ctx context.Context, a Ask) (Word, error) {
	var w Word
	err := l.u.Update(ctx, func(saved []byte) ([]byte, error) {
		// Bytes that are no schedule (another format's, or damaged) give
		// way to a fresh one, as a damaged state does.
		s, _ := ParseState(saved)
		w = s.Step(l.now().UnixMicro(), a)
		return s.AppendBinary(nil), nil
	})
	return w, err
}

// stateFormat opens a State's encoding.
const stateFormat = 2

// numbers are s's numbers in their encoding's order.
func (s *State) numbers() []*int64 {
	n := []*int64{&s.Version, &s.Gap, &s.AnchorAt, &s.AnchorIdx, &s.NextIdx, &s.Busy, &s.LastAt, &s.Tenth, &s.InARow, &s.Most}
	for i := range s.Accepted {
		n = append(n, &s.Accepted[i])
	}
	return n
}

// AppendBinary appends s's encoding to b: its format, its numbers as
// varints, and the learnt record after its length.
func (s *State) AppendBinary(b []byte) []byte {
	b = append(b, stateFormat)
	for _, v := range s.numbers() {
		b = binary.AppendVarint(b, *v)
	}
	b = binary.AppendVarint(b, int64(len(s.Learnt)))
	return append(b, s.Learnt...)
}

// ParseState is the State b encodes (AppendBinary): an empty one for no
// bytes, and an error for bytes that are not one.
func ParseState(b []byte) (State, error) {
	var s State
	if len(b) == 0 {
		return s, nil
	}
	if b[0] != stateFormat {
		return State{}, errNotState
	}
	b = b[1:]
	var n int64
	for _, v := range append(s.numbers(), &n) {
		x, k := binary.Varint(b)
		if k <= 0 {
			return State{}, errNotState
		}
		*v, b = x, b[k:]
	}
	if n < 0 || n != int64(len(b)) || s.Gap < 0 || s.NextIdx < s.AnchorIdx || s.InARow < 0 || s.Most < 0 || slices.Min(s.Accepted[:]) < 0 {
		return State{}, errNotState
	}
	if n > 0 {
		s.Learnt = b
	}
	return s, nil
}

var errNotState = errors.New("schedule: not a schedule's bytes")
