package schedule

import (
	"context"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceshare"
)

// Two runs on one machine share a schedule in one directory, through the
// file store's lock: the second's take follows the first's, and hears
// what the first learnt.
func TestLocked_runsShareAFile(t *testing.T) {
	dir := t.TempDir()
	open := func() *Locked {
		s, err := paceshare.Open(dir, "schedule-test", "https://api.example.test", "token")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return NewLocked(s, time.Now)
	}
	a, b := open(), open()
	ctx := context.Background()
	if w, err := a.Step(ctx, Ask{Kind: Learn, Gap: 20 * time.Millisecond, Learnt: []byte("pace")}); err != nil || w.First != 1 || w.Learnt != nil {
		t.Fatalf("the first learn: %+v, %v", w, err)
	}
	wa, err := a.Step(ctx, Ask{Kind: Take, Known: 1, N: 3, Gap: -1, Told: Answers{Accepted: 2}})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.Step(ctx, Ask{Kind: Take, N: 2, Gap: -1, Told: Answers{Accepted: 1, Refused: 1, Tail: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if wa.First != 0 || wb.First != 3 || string(wb.Learnt) != "pace" || wa.Learnt != nil || wb.Accepted != 3 || wb.InARow != 1 {
		t.Errorf("takes: %+v then %+v; want slots 0 to 2, then 3 and 4 with the pace learnt and both runs' answers", wa, wb)
	}
	if w, err := b.Step(ctx, Ask{Kind: Learn, Gap: time.Second, Busy: -1}); err != nil || w.First != 0 || w.Version != 1 {
		t.Errorf("a learn by an old version: %+v, %v; want refused", w, err)
	}
}

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
