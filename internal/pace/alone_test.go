package pace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAlone_takesItsShare: a process that goes on its own copy while the
// other members have requests let go (its store away, held past BusyFor,
// or failed) paces at the copy's pace over the members it saw, counting
// its own requests alone, and takes its share once only; once a step
// shares again (but for a store that failed), the fleet's pace is back.
func TestAlone_takesItsShare(t *testing.T) {
	for name, fail := range map[string]error{
		"away":   fmt.Errorf("redis: i/o timeout: %w", ErrAway),
		"held":   fmt.Errorf("held by another run: %w", ErrBusy),
		"failed": errors.New("permission denied"),
	} {
		t.Run(name, func(t *testing.T) {
			clock, store, ps := sharedPacers("b", "c", "a")
			var tks []Ticket
			for _, p := range ps { // a loads last, with b's and c's requests in flight
				tk, _, ok := p.askOK(bg, clock.now)
				if !ok {
					t.Fatal("a first request was held")
				}
				if p != ps[2] {
					p.Done(tk, Answer{}) // answered, not yet released: in flight
				}
				tks = append(tks, tk)
				clock.now = clock.now.Add(time.Second)
			}
			a, ta := ps[2], tks[2]
			fleet := a.pace.Limit()
			store.fail = fail
			a.Done(ta, Answer{})
			if name == "held" { // held, then taken for held by a run that stopped
				clock.now = clock.now.Add(BusyFor)
				a.ask(bg, clock.now) // a step, which goes alone
			}
			if got := a.pace.Limit(); got != fleet/3 || a.inFlight != a.own.InFlight {
				t.Fatalf("pace %v, %d in flight: want %v, a third of the fleet's, and a's own %d alone",
					got, a.inFlight, fleet/3, a.own.InFlight)
			}
			if e := eventSaying(a, "run's share"); !strings.Contains(e, "members:3") {
				t.Fatalf("event %q: want a's share of three members told", e)
			}
			clock.now = clock.now.Add(time.Millisecond)
			a.Release(ta)
			if name == "failed" {
				if got := a.pace.Limit(); got != fleet/3 {
					t.Fatalf("pace %v: want a's share kept, %v, with sharing ended", got, fleet/3)
				}
				return
			}
			if got := a.pace.Limit(); got != fleet/3 {
				t.Fatalf("pace %v after a second step alone: want the share taken once, %v", got, fleet/3)
			}
			store.fail = nil
			a.Release(ta)
			if got := a.pace.Limit(); got != fleet || a.inFlight == a.own.InFlight {
				t.Fatalf("pace %v, %d in flight, once the store shares again: want the fleet's, %v, with b's and c's requests",
					got, a.inFlight, fleet)
			}
		})
	}
}

// TestAlone_aCopyOfItsOwnIsWhole: a process that was the only member with
// requests let go keeps its copy's pace whole when it goes alone.
func TestAlone_aCopyOfItsOwnIsWhole(t *testing.T) {
	clock, store, ps := sharedPacers("a")
	a := ps[0]
	tk, _, _ := a.askOK(bg, clock.now)
	pace := a.pace.Limit()
	store.fail = fmt.Errorf("redis: connection refused: %w", ErrAway)
	a.Done(tk, Answer{})
	if got := a.pace.Limit(); got != pace || eventSaying(a, "run's share") != "" {
		t.Fatalf("pace %v: want a's own, %v, kept whole, with no share told", got, pace)
	}
}

// TestAlone_sharesTheTokensOwed: the tokens the fleet owes for requests
// let go before their tokens are shared too, so a run alone waits its
// share of the debt, not all of it at its share of the pace.
func TestAlone_sharesTheTokensOwed(t *testing.T) {
	clock, store, ps := sharedPacers("b", "a")
	b, a := ps[0], ps[1]
	tb, _, _ := b.askOK(bg, clock.now)
	b.Done(tb, Answer{})
	clock.now = clock.now.Add(time.Second)
	ta, _, _ := a.askOK(bg, clock.now)
	a.pace = limiterAt(10, -2, clock.now) // the fleet owes two tokens
	store.fail = fmt.Errorf("redis: connection refused: %w", ErrAway)
	a.Release(ta)
	// Five a second, and one token owed: a's next in 400 ms.
	if got := a.tokenWait(clock.now); a.pace.Limit() != 5 || got != 400*time.Millisecond {
		t.Fatalf("pace %v, next token in %v: want 5 a second, and 400 ms", a.pace.Limit(), got)
	}
}

// counted is a member whose store tells how many members are live.
type counted struct {
	member
	live int
}

func (c counted) Live() int { return c.live }

// TestAlone_sharesAmongTheMembersLive: a store that counts the members
// live has the share taken among them all, idle ones too, when they are
// more than the copy holds with requests let go (a fleet gone alone at
// once, whose busy steps saved none of theirs).
func TestAlone_sharesAmongTheMembersLive(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	store := &memStore{gone: map[string]bool{}}
	a := defaultPacer(clock)
	a.Share(counted{store.member("a"), 8})
	tk, _, _ := a.askOK(bg, clock.now)
	pace := a.pace.Limit()
	store.fail = fmt.Errorf("redis: i/o timeout: %w", ErrAway)
	a.Release(tk)
	if got := a.pace.Limit(); got != pace/8 || !strings.Contains(eventSaying(a, "run's share"), "members:8") {
		t.Fatalf("pace %v: want an eighth of %v, the members live", got, pace)
	}
}

// awayStore is a member whose store is away over a span of its clock's
// time, as a Redis too slow for every member at once.
type awayStore struct {
	member
	clock     Clock
	from, til time.Time
}

func (a awayStore) Update(ctx context.Context, f func([]byte) ([]byte, error)) error {
	if now := a.clock.Now(); !now.Before(a.from) && now.Before(a.til) {
		return fmt.Errorf("redis: i/o timeout: %w", ErrAway)
	}
	return a.member.Update(ctx, f)
}

// TestAlone_aFleetCutOffKeepsItsPace: sixteen plans behind nginx whose
// store is away for three seconds of their run, all at once, each pace at
// their share and meet the fleet's targets, as with the store there.
func TestAlone_aFleetCutOffKeepsItsPace(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3) {
		store, n := &memStore{}, 0
		from := time.Unix(1_800_000_000, 0).Add(3 * time.Second)
		plans := simulateFleet(seed, 16, fleetReads, silent{newBucket(50, 10)}, quiet.net, quiet.launch, func(c Clock) *Pacer {
			p := defaultPacer(c)
			p.Share(awayStore{store.member(fmt.Sprint(n)), c, from, from.Add(3 * time.Second)})
			n++
			return p
		}, 0)
		ratio, share, _ := fleetTook(plans)
		t.Logf("seed %d: %.3fx, %.2f%% refused", seed, ratio, share)
		if want := fleetCases[0].target[16]; !want.within(figures{worst: ratio, refused: share}) {
			t.Errorf("seed %d: %.3fx, %.2f%% refused: want <= %.2fx, <= %.1f%%, as with the store there (each at the whole pace: 23%% to 25%%)",
				seed, ratio, share, want.worst, want.refused)
		}
	}
}

// TestAlone_aStepNotSavedRunsAgainAtTheShare: a step that ran on the
// shared state and was then not saved (Redis's answer lost: away; or the
// store failed) may have let a request go on a token no other member will
// know was taken. It runs again on the copy, at the share, so the request
// waits for a token of this run's own.
func TestAlone_aStepNotSavedRunsAgainAtTheShare(t *testing.T) {
	for name, fail := range map[string]error{
		"away":   fmt.Errorf("redis: i/o timeout: %w", ErrAway),
		"failed": errors.New("disk full"),
	} {
		t.Run(name, func(t *testing.T) {
			clock, store, ps := sharedPacers("b", "a")
			b, a := ps[0], ps[1]
			tb, _, _ := b.askOK(bg, clock.now)
			b.Done(tb, Answer{})
			clock.now = clock.now.Add(time.Second) // the shared pace's token is back
			store.stale = fail
			if _, _, ok := a.askOK(bg, clock.now); ok {
				t.Fatal("a's request went on the shared state's token, which no member will know was taken")
			}
			if e := eventSaying(a, "run's share"); !strings.Contains(e, "members:2") {
				t.Fatalf("event %q: want a's share of two members told", e)
			}
		})
	}
}
