package schedule

import (
	"bytes"
	"reflect"
	"testing"
)

// A rule of the schedule a row: the state before, the step, the state
// after and what the step returned.
func TestState_rules(t *testing.T) {
	// Slots 10 to 19 given, 100 apart from 1000: 19 is due at 1900, and
	// the next slot given at 2000.
	busy := State{Version: 2, Learnt: []byte("b"), Gap: 100, AnchorAt: 1000, AnchorIdx: 10, NextIdx: 20, LastAt: 1200}
	// Answers told in tenths 45 (3 accepted) and 50 (2), one refused since:
	// 5 accepted over the last second at 5.0 s.
	told := State{Accepted: [10]int64{0: 2, 5: 3}, Tenth: 50, InARow: 1}
	with := func(s State, f func(*State)) State {
		f(&s)
		return s
	}
	for _, tc := range []struct {
		name     string
		before   State
		step     func(*State) int64
		after    State
		returned int64
	}{
		{"an empty schedule gives slots due now",
			State{}, func(s *State) int64 { return s.Take(500, 3, 0, -1) },
			State{AnchorAt: 500, NextIdx: 3, LastAt: 500}, 0},
		{"a busy schedule gives the slots after the last given, and counts the time since its last step busy",
			busy, func(s *State) int64 { return s.Take(1250, 2, 2, -1) },
			with(busy, func(s *State) { s.NextIdx, s.Busy, s.LastAt = 22, 50, 1250 }), 20},
		{"a schedule whose next slot is past is anchored at now, and was busy till then",
			busy, func(s *State) int64 { return s.Take(2500, 1, 2, -1) },
			with(busy, func(s *State) { s.AnchorAt, s.AnchorIdx, s.NextIdx, s.Busy, s.LastAt = 2500, 20, 21, 800, 2500 }), 20},
		{"a take by the current version sets its gap from the first slot not yet due",
			busy, func(s *State) int64 { return s.Take(1250, 1, 2, 80) },
			// slot 12 went at 1200, so 13 goes at 1280, and 20, given, at 1840
			with(busy, func(s *State) {
				s.Gap, s.AnchorAt, s.AnchorIdx, s.NextIdx, s.Busy, s.LastAt = 80, 1280, 13, 21, 50, 1250
			}), 20},
		{"a take by an old version keeps the gap",
			busy, func(s *State) int64 { return s.Take(1250, 1, 1, 80) },
			with(busy, func(s *State) { s.NextIdx, s.Busy, s.LastAt = 21, 50, 1250 }), 20},
		{"a learn by the current version saves and spaces the slots not yet due again",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 2, 300, -1, 0, []byte("c"))) },
			// slot 13 is the first due after 1250 (at 1300); 12 went at 1200, so 13 goes at 1500
			with(busy, func(s *State) {
				s.Version, s.Learnt, s.Gap, s.AnchorAt, s.AnchorIdx, s.Busy, s.LastAt = 3, []byte("c"), 300, 1500, 13, 50, 1250
			}), 1},
		{"a learn sets busy",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 2, 300, 0, 0, nil)) },
			with(busy, func(s *State) {
				s.Version, s.Learnt, s.Gap, s.AnchorAt, s.AnchorIdx, s.Busy, s.LastAt = 3, nil, 300, 1500, 13, 0, 1250
			}), 1},
		{"a learn that speeds up goes no earlier than now",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 2, 10, -1, 0, []byte("c"))) },
			with(busy, func(s *State) {
				s.Version, s.Learnt, s.Gap, s.AnchorAt, s.AnchorIdx, s.Busy, s.LastAt = 3, []byte("c"), 10, 1250, 13, 50, 1250
			}), 1},
		{"a learn at a slot's due time spaces that slot again",
			busy, func(s *State) int64 { return b2i(s.Learn(1300, 2, 300, -1, 0, []byte("c"))) },
			with(busy, func(s *State) {
				s.Version, s.Learnt, s.Gap, s.AnchorAt, s.AnchorIdx, s.Busy, s.LastAt = 3, []byte("c"), 300, 1500, 13, 100, 1300
			}), 1},
		{"a learn by an old version saves nothing but counts busy",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 1, 300, -1, 0, []byte("c"))) },
			with(busy, func(s *State) { s.Busy, s.LastAt = 50, 1250 }), 0},
		{"a learn on an idle schedule anchors the next slot at now",
			busy, func(s *State) int64 { return b2i(s.Learn(5000, 2, 300, -1, 0, nil)) },
			with(busy, func(s *State) {
				s.Version, s.Learnt, s.Gap, s.AnchorAt, s.AnchorIdx, s.Busy, s.LastAt = 3, nil, 300, 5000, 20, 800, 5000
			}), 1},
		{"a learn on a schedule with no gap spaces the slots not yet due from their anchor",
			State{AnchorAt: 700, NextIdx: 3, LastAt: 600}, func(s *State) int64 { return b2i(s.Learn(650, 0, 300, -1, 0, []byte("a"))) },
			State{Version: 1, Learnt: []byte("a"), Gap: 300, AnchorAt: 700, NextIdx: 3, Busy: 50, LastAt: 650}, 1},
		{"a learn before the anchor is due keeps the anchor",
			State{Version: 1, Gap: 100, AnchorAt: 2000, AnchorIdx: 5, NextIdx: 9}, func(s *State) int64 { return b2i(s.Learn(1500, 1, 200, -1, 0, nil)) },
			State{Version: 2, Gap: 200, AnchorAt: 2100, AnchorIdx: 5, NextIdx: 9, LastAt: 1500}, 1},
		{"a learn's pause puts the first slot not yet due at its end, the rest after it at the gap",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 2, 100, -1, 3000, []byte("p"))) },
			with(busy, func(s *State) {
				s.Version, s.Learnt, s.AnchorAt, s.AnchorIdx, s.Busy, s.LastAt = 3, []byte("p"), 3000, 13, 50, 1250
			}), 1},
		{"a pause already over moves no slot",
			busy, func(s *State) int64 { return b2i(s.Learn(1250, 2, 100, -1, 1000, []byte("p"))) },
			with(busy, func(s *State) {
				s.Version, s.Learnt, s.AnchorAt, s.AnchorIdx, s.Busy, s.LastAt = 3, []byte("p"), 1300, 13, 50, 1250
			}), 1},
		{"a pause on an idle schedule puts the next slot given at its end",
			busy, func(s *State) int64 { return b2i(s.Learn(5000, 2, 100, -1, 6000, nil)) },
			with(busy, func(s *State) {
				s.Version, s.Learnt, s.AnchorAt, s.AnchorIdx, s.Busy, s.LastAt = 3, nil, 6000, 20, 800, 5000
			}), 1},
		{"a read counts busy",
			busy, func(s *State) int64 { s.Read(1250); return 0 },
			with(busy, func(s *State) { s.Busy, s.LastAt = 50, 1250 }), 0},
		{"the accepted are counted in the tenth of a second they are told",
			told, func(s *State) int64 { s.Tell(5_030_000, Answers{Accepted: 2}); return s.acceptedInASecond() },
			with(told, func(s *State) { s.Accepted[0], s.InARow = 4, 0 }), 7},
		{"a tenth more than a second old counts no more",
			told, func(s *State) int64 { s.Tell(5_550_000, Answers{}); return s.acceptedInASecond() },
			with(told, func(s *State) { s.Accepted, s.Tenth = [10]int64{0: 2}, 55 }), 2},
		{"a second with nothing told counts nothing",
			told, func(s *State) int64 { s.Tell(9_000_000, Answers{}); return s.acceptedInASecond() },
			with(told, func(s *State) { s.Accepted, s.Tenth = [10]int64{}, 90 }), 0},
		{"refusals with none accepted add to those in a row, and take the most a second accepted",
			told, func(s *State) int64 { s.Tell(5_030_000, Answers{Refused: 2, Tail: 2}); return s.InARow },
			with(told, func(s *State) { s.InARow, s.Most = 3, 5 }), 3},
		{"an acceptance ends the refusals in a row, leaving those told after it",
			told, func(s *State) int64 { s.Tell(5_030_000, Answers{Accepted: 1, Refused: 3, Tail: 2}); return s.InARow },
			with(told, func(s *State) { s.Accepted[0], s.InARow, s.Most = 3, 2, 6 }), 2},
		{"counts below 0 are none, and the tail at most the refusals",
			told, func(s *State) int64 { s.Tell(5_030_000, Answers{Accepted: -4, Refused: 1, Tail: 9}); return s.InARow },
			with(told, func(s *State) { s.InARow, s.Most = 2, 5 }), 2},
		{"a clock that went back counts in the latest tenth",
			told, func(s *State) int64 { s.Tell(4_000_000, Answers{Accepted: 1}); return s.acceptedInASecond() },
			with(told, func(s *State) { s.Accepted[0], s.InARow = 3, 0 }), 6},
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
	learnt := bytes.Equal(a.Learnt, b.Learnt)
	a.Learnt, b.Learnt = nil, nil
	return learnt && reflect.DeepEqual(a, b)
}

// The schedule's invariants, whatever the steps: no slot is given twice,
// slots are given in order, a step never moves a slot given since the
// anchor and not yet due before now, none goes before a pause learnt, busy never falls but by a learn, an
// old version saves nothing, the fleet's count of the last second is what
// was told in its last ten tenths, and the most a second accepted never
// falls, nor is less than that count when a refusal is told.
func FuzzState(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 9, 0, 1, 3, 4, 5})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var s State
		now := int64(1_000_000)
		given := int64(0)
		var told []Answers // what was told, by tenth of a second
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%5, int64(ops[i+1])
			now += arg * arg * 7 // up to some 450 ms a step
			before := s
			switch op {
			case 0:
				if first := s.Take(now, arg%5+1, s.Version-arg%2, arg*11-100); first != given {
					t.Fatalf("gave %d, want %d", first, given)
				}
				given = s.NextIdx
			case 1:
				until := (now + arg*31) * (arg % 2) // a pause every other learn
				s.Learn(now, s.Version, arg*13, -1, until, nil)
				if s.Due(s.AnchorIdx) < until {
					t.Fatalf("a pause until %d, and the first slot not yet due at %d", until, s.Due(s.AnchorIdx))
				}
			case 2:
				if s.Learn(now, s.Version-1, 1, 0, 0, nil) {
					t.Fatal("a learn by an old version saved")
				}
			case 3:
				s.Read(now)
			case 4:
				a := Answers{Accepted: arg % 7, Refused: arg % 3, Tail: arg % 2}
				s.Tell(now, a)
				for int64(len(told)) <= now/Tenths {
					told = append(told, Answers{})
				}
				told[now/Tenths].Accepted += a.Accepted
				var second int64
				for _, a := range told[max(0, len(told)-10):] {
					second += a.Accepted
				}
				if got := s.acceptedInASecond(); got != second || s.Most < before.Most || a.Refused > 0 && s.Most < got {
					t.Fatalf("counted %d accepted over the last second, most %d, after %+v told; want %d", got, s.Most, a, second)
				}
			}
			for j := before.NextIdx - 1; j >= before.AnchorIdx && before.Due(j) >= now; j-- {
				if s.Due(j) < now {
					t.Fatalf("step %d moved slot %d before now: %d < %d", op, j, s.Due(j), now)
				}
			}
			if s.Version == before.Version && s.Busy < before.Busy || s.Gap < 0 || s.NextIdx < s.AnchorIdx {
				t.Fatalf("%+v after %+v", s, before)
			}
		}
	})
}
