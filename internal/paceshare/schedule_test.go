package paceshare

import (
	"context"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/schedule"
)

// Two runs on one machine share a schedule in one directory, through the
// file store's lock: the second's take follows the first's, and hears
// what the first learnt.
func TestStore_runsShareASchedule(t *testing.T) {
	dir := t.TempDir()
	open := func() *schedule.Locked {
		s, err := Open(dir, "schedule-test", "https://api.example.test", "token")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return schedule.NewLocked(s, time.Now)
	}
	a, b := open(), open()
	ctx := context.Background()
	if w, err := a.Step(ctx, schedule.Ask{Kind: schedule.Learn, Gap: 20 * time.Millisecond, Learnt: []byte("pace")}); err != nil || w.First != 1 || w.Learnt != nil {
		t.Fatalf("the first learn: %+v, %v", w, err)
	}
	wa, err := a.Step(ctx, schedule.Ask{Kind: schedule.Take, Known: 1, N: 3, Gap: -1, Told: schedule.Answers{Accepted: 2}})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.Step(ctx, schedule.Ask{Kind: schedule.Take, N: 2, Gap: -1, Told: schedule.Answers{Accepted: 1, Refused: 1, Tail: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if wa.First != 0 || wb.First != 3 || string(wb.Learnt) != "pace" || wa.Learnt != nil || wb.Accepted != 3 || wb.InARow != 1 {
		t.Errorf("takes: %+v then %+v; want slots 0 to 2, then 3 and 4 with the pace learnt and both runs' answers", wa, wb)
	}
	if w, err := b.Step(ctx, schedule.Ask{Kind: schedule.Learn, Gap: time.Second, Busy: -1}); err != nil || w.First != 0 || w.Version != 1 {
		t.Errorf("a learn by an old version: %+v, %v; want refused", w, err)
	}
}
