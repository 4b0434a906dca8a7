package pace

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBusy_aStoreHoldsRequests: while the store is busy, a request
// does not go on the Pacer's own copy of the model, whose tokens others may
// have spent: it waits for its turn to ask again, and an answer runs on the
// copy. A store that ran the steps before it found itself busy (Redis,
// others saving first) leaves nothing of the ask behind, and holds
// requests for as long as it is busy: the fleet goes on. One that runs no
// step for BusyFor in a row (a lock held) is taken for held by a run that
// stopped, and requests go on the run's own copy; the first step it takes
// shares again.
func TestBusy_aStoreHoldsRequests(t *testing.T) {
	busy := fmt.Errorf("held by another run: %w", ErrBusy)
	for _, ran := range []bool{false, true} {
		t.Run(fmt.Sprint("ran the steps ", ran), func(t *testing.T) {
			clock, store, ps := sharedPacers("a")
			p := ps[0]
			tk, _, _ := p.askOK(bg, clock.now)
			p.Done(tk, Answer{})
			p.Release(tk)
			clock.now = clock.now.Add(time.Second)
			tk, _, _ = p.askOK(bg, clock.now)
			if ran {
				store.stale = busy
			} else {
				store.fail = busy
			}
			clock.now = clock.now.Add(time.Second)
			firstAsk := clock.now
			_, wait, hold := p.ask(bg, clock.now)
			if hold != HoldStore || wait != SharedPoll || p.own.InFlight != 1 || p.Alone() != nil {
				t.Fatalf("held by %v for %v, own in flight %d, alone %v: want the store's round trip, SharedPoll, the one request before",
					hold, wait, p.own.InFlight, p.Alone())
			}
			if e := eventSaying(p, "busy"); !strings.Contains(e, "wait for their turn") || !strings.Contains(e, ErrBusy.Error()) {
				t.Fatalf("event %q: want the busy store, requests waiting", e)
			}
			p.Done(tk, Answer{}) // on the copy
			if p.own.Unanswered != 0 || p.own.InFlight != 1 {
				t.Fatalf("own %+v: want the answer counted", p.own)
			}
			clock.now = clock.now.Add(BusyFor)
			var want counts // a's, once tk is released
			if ran {
				if _, _, hold := p.ask(bg, clock.now); hold != HoldStore {
					t.Fatalf("held by %v: want others saving first to hold requests for as long as they do", hold)
				}
				want.Waiting = firstAsk // its place in the turns, from its first ask
			} else {
				if _, _, ok := p.askOK(bg, clock.now); !ok || p.own.InFlight != 2 {
					t.Fatalf("went %v, own in flight %d: want it to go on its own copy, busy for BusyFor", ok, p.own.InFlight)
				}
				if e := eventSaying(p, "own copy"); !strings.Contains(e, fmt.Sprint("busy_for_ms:", BusyFor.Milliseconds())) {
					t.Fatalf("event %q: want the step gone on this run's own copy", e)
				}
				want = counts{InFlight: 1, Unanswered: 1}
			}
			store.fail, store.stale = nil, nil
			p.Release(tk)
			if st, err := decodeState(store.data); err != nil || st.members["a"] != want {
				t.Fatalf("members %+v (%v): want a's requests, %+v, shared again", st.members, err, want)
			}
			store.fail = busy
			clock.now = clock.now.Add(time.Millisecond)
			if _, _, hold := p.ask(bg, clock.now); hold != HoldStore {
				t.Fatalf("held by %v: want a busy store to hold requests again once a step went through", hold)
			}
		})
	}
}

// TestBusy_anAskWaitsItsTurn: an ask the store was too busy to run
// waits, as the state last loaded tells, for the next token and a token
// for each member that began to wait before it, rather than ask again at
// once: so a busy fleet's held asks keep to their turns.
func TestBusy_anAskWaitsItsTurn(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	store := &memStore{gone: map[string]bool{}}
	a, b := New(clock, 8, 10, 30*time.Second), New(clock, 8, 10, 30*time.Second) // a token every 100 ms
	a.Share(store.member("a"))
	b.Share(store.member("b"))
	if _, _, ok := a.askOK(bg, clock.now); !ok {
		t.Fatal("a's first request was held")
	}
	if _, _, ok := b.askOK(bg, clock.now); ok {
		t.Fatal("b's request went without a token")
	}
	clock.now = clock.now.Add(time.Millisecond)
	store.stale = fmt.Errorf("others saved first: %w", ErrBusy)
	_, wait, hold := a.ask(bg, clock.now)
	if want := 99*time.Millisecond + 100*time.Millisecond; hold != HoldStore || wait != want {
		t.Fatalf("held by %v for %v: want the store's, %v (the next token, then b's turn)", hold, wait, want)
	}
}
