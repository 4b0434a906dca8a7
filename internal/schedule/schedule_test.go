package schedule

import (
	"bytes"
	"testing"
)

// A rule of the schedule a row: the state before, the step, the state
// after and what the step returned.
func TestState_rules(t *testing.T) {
	busy := State{Version: 2, Learnt: []byte("b"), Gap: 100, AnchorAt: 1000, AnchorIdx: 10, NextIdx: 20} // slot 19 due at 1900
	for _, tc := range []struct {
		name     string
		before   State
		step     func(*State) int64
		after    State
		returned int64
	}{
		{"an empty schedule gives slots due now",
			State{}, func(s *State) int64 { return s.Take(500, 3) },
			State{AnchorAt: 500, NextIdx: 3}, 0},
		{"a busy schedule gives the slots after the last given",
			busy, func(s *State) int64 { return s.Take(1200, 2) },
			State{Version: 2, Learnt: []byte("b"), Gap: 100, AnchorAt: 1000, AnchorIdx: 10, NextIdx: 22}, 20},
		{"a schedule whose next slot is past is anchored at now",
			busy, func(s *State) int64 { return s.Take(2500, 1) },
			State{Version: 2, Learnt: []byte("b"), Gap: 100, AnchorAt: 2500, AnchorIdx: 20, NextIdx: 21}, 20},
		{"a learn by the current version saves and spaces the slots not yet due again",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 2, 300, []byte("c"))) },
			// slot 13 is the first due after 1250 (at 1300); 12 went at 1200, so 13 goes at 1500
			State{Version: 3, Learnt: []byte("c"), Gap: 300, AnchorAt: 1500, AnchorIdx: 13, NextIdx: 20}, 1},
		{"a learn that speeds up goes no earlier than now",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 2, 10, []byte("c"))) },
			State{Version: 3, Learnt: []byte("c"), Gap: 10, AnchorAt: 1250, AnchorIdx: 13, NextIdx: 20}, 1},
		{"a learn at a slot's due time spaces that slot again",
			busy, func(s *State) int64 { return b2i(s.Learn(1300, 2, 300, []byte("c"))) },
			State{Version: 3, Learnt: []byte("c"), Gap: 300, AnchorAt: 1500, AnchorIdx: 13, NextIdx: 20}, 1},
		{"a learn by an old version saves nothing",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 1, 300, []byte("c"))) },
			busy, 0},
		{"a learn on an idle schedule anchors the next slot at now",
			busy, func(s *State) int64 { return b2i(s.Learn(5000, 2, 300, nil)) },
			State{Version: 3, Gap: 300, AnchorAt: 5000, AnchorIdx: 20, NextIdx: 20}, 1},
		{"a learn on a schedule with no gap anchors the next slot at now",
			State{AnchorAt: 500, NextIdx: 3}, func(s *State) int64 { return b2i(s.Learn(600, 0, 300, []byte("a"))) },
			State{Version: 1, Learnt: []byte("a"), Gap: 300, AnchorAt: 600, AnchorIdx: 3, NextIdx: 3}, 1},
		{"a learn before the anchor is due keeps the anchor",
			State{Version: 1, Gap: 100, AnchorAt: 2000, AnchorIdx: 5, NextIdx: 9}, func(s *State) int64 { return b2i(s.Learn(1500, 1, 200, nil)) },
			State{Version: 2, Gap: 200, AnchorAt: 2100, AnchorIdx: 5, NextIdx: 9}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.before
			s.Learnt = bytes.Clone(s.Learnt)
			got := tc.step(&s)
			if got != tc.returned || !same(s, tc.after) {
				t.Errorf("got %+v, returned %d; want %+v, %d", s, got, tc.after, tc.returned)
			}
		})
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func same(a, b State) bool {
	return bytes.Equal(a.Learnt, b.Learnt) && a.Version == b.Version && a.Gap == b.Gap &&
		a.AnchorAt == b.AnchorAt && a.AnchorIdx == b.AnchorIdx && a.NextIdx == b.NextIdx
}

// The schedule's invariants, whatever the steps: no slot is given twice,
// slots are given in order, a slot's time never moves earlier than a
// later slot's, and a learn never moves a slot not yet due before now.
func FuzzState(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 9, 0, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var s State
		now := int64(1_000_000)
		given := int64(0)
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%3, int64(ops[i+1])
			now += arg * 7
			switch op {
			case 0:
				first := s.Take(now, arg%5+1)
				if first != given {
					t.Fatalf("gave %d, want %d", first, given)
				}
				given = s.NextIdx
				if s.Due(first) < now && s.Gap > 0 && first == s.AnchorIdx {
					t.Fatalf("slot %d due %d before now %d", first, s.Due(first), now)
				}
			case 1:
				before := s
				if s.Learn(now, s.Version, arg*13, nil) {
					for j := before.NextIdx - 1; j >= 0 && before.Due(j) >= now; j-- {
						if s.Due(j) < now {
							t.Fatalf("learn moved slot %d before now: %d < %d", j, s.Due(j), now)
						}
					}
				}
			case 2:
				if s.Learn(now, s.Version-1, 1, nil) {
					t.Fatal("a learn by an old version saved")
				}
			}
			if s.Gap < 0 || s.NextIdx < s.AnchorIdx {
				t.Fatalf("state %+v", s)
			}
		}
	})
}
