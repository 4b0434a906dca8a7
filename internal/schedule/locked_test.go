package schedule

import (
	"testing"
)

func TestParseState(t *testing.T) {
	s := State{Version: 3, Learnt: []byte("abc"), Gap: 20_000, AnchorAt: 1_765_000_000_000_000, AnchorIdx: 7, NextIdx: 9, Busy: 40_000, LastAt: 1_765_000_000_000_100,
		Accepted: [10]int64{3: 4, 9: 1}, Tenth: 17_650_000_000_001, InARow: 2, Most: 5}
	got, err := ParseState(s.AppendBinary(nil))
	if err != nil || !same(got, s) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	negative := s
	negative.Accepted[0] = -1
	for _, b := range [][]byte{{1}, {2, 0}, append(s.AppendBinary(nil), 'x'), s.AppendBinary(nil)[:5], negative.AppendBinary(nil)} {
		if _, err := ParseState(b); err == nil {
			t.Errorf("%q parsed", b)
		}
	}
	if got, err := ParseState(nil); err != nil || !same(got, State{}) {
		t.Errorf("no bytes: %+v, %v", got, err)
	}
}

func FuzzParseState(f *testing.F) {
	f.Add((&State{Version: 1, Learnt: []byte("x"), Gap: 5, NextIdx: 2}).AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseState(b)
		if err != nil {
			return
		}
		again, err := ParseState(s.AppendBinary(nil))
		if err != nil || !same(again, s) {
			t.Fatalf("%+v does not survive its encoding: %+v, %v", s, again, err)
		}
	})
}
