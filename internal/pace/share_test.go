package pace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memStore is a shared state in memory: what internal/paceshare keeps on
// disk, for Pacers in one test.
type memStore struct {
	data   []byte
	gone   map[string]bool // members whose process ended
	fail   error           // every Update fails with it, when set
	stale  error           // every Update runs f, saves nothing and fails with it, when set
	healed error           // the next Update, once saved, says it healed the state
	steps  int             // the Updates asked for
}

// member is one Pacer's view of a memStore.
type member struct {
	*memStore
	name string
}

func (s *memStore) member(name string) member { return member{s, name} }

// bg is the context of steps that nothing cancels.
var bg = context.Background()

func (m member) Update(_ context.Context, f func([]byte) ([]byte, error)) error {
	m.steps++
	if m.fail != nil {
		return m.fail
	}
	b, err := f(m.data)
	if err != nil {
		return err
	}
	if m.stale != nil {
		return m.stale
	}
	m.data = b
	healed := m.healed
	m.healed = nil
	return healed
}

func (m member) Member() string { return m.name }

func (m member) Gone(members []string) []string {
	return slices.DeleteFunc(slices.Clone(members), func(n string) bool { return !m.gone[n] })
}

// sharedPacers is a clock and a Pacer for each name, sharing one memStore.
func sharedPacers(names ...string) (*fakeClock, *memStore, []*Pacer) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	store := &memStore{gone: map[string]bool{}}
	var ps []*Pacer
	for _, n := range names {
		p := defaultPacer(clock)
		p.Share(store.member(n))
		ps = append(ps, p)
	}
	return clock, store, ps
}

// fleetCase is a limit a fleet of plans meets, and the targets: at K = 4,
// the ratio only; at 8 and 16, the ratio and the share refused.
type fleetCase struct {
	name   string
	new    func() limiter
	target map[int]figures // by K: the worst ratio and the worst share refused
	// alone is the most refused, in percent, sharing nothing at K = 8.
	// Each plan then learns the limit from its own refusals alone, and a
	// read refused without Retry-After goes back at once at its plan's own
	// pace: the starts' overshoots cost some 25% behind nginx and HAProxy.
	// Sharing the pace is what holds them down.
	alone float64
	// apart are the targets at K = 8 and 16 sharing nothing, where a
	// limit announces what remains: each plan takes its share of it.
	// At K = 16 the model misses the share refused in one seed of three
	// (1.5%), and the figure holds it where it is: a plan joining the
	// others lets a second request go at once, to tell whether they still
	// spend, and sixteen joining near a window's end spend past it.
	// Through Terraform the targets hold (make bench-fleet).
	apart map[int]figures
	// busy is the target at K = 16 apart on a busy machine, where not
	// the shared one (TestShare_quotaApartOnABusyMachine).
	busy figures
}

var fleetCases = []fleetCase{
	{name: "nginx", new: func() limiter { return silent{newBucket(50, 10)} },
		target: map[int]figures{4: {worst: 1.5, refused: 100}, 8: {worst: 1.3, refused: 4}, 16: {worst: 1.3, refused: 4}}, alone: 26},
	// A rolling window counting the requests it refuses, as HAProxy's
	// counter does, so a start's overshoot closes it for a second, which
	// the probe finds late.
	{name: "rolling, counting refused", new: func() limiter { return silent{&rollingWindow{n: 50, countRefused: true}} },
		target: map[int]figures{4: {worst: 1.5, refused: 100}, 8: {worst: 1.3, refused: 4}, 16: {worst: 1.3, refused: 4}}, alone: 27},
	// HAProxy's own counter (ratelimit.PeriodRate): the period before
	// weighs on the current one, so a shut-out lasts longer than a
	// rolling window's. The probe that ends it re-bases the pace on what
	// a second admitted before.
	{name: "HAProxy", new: func() limiter { return silent{&periodRate{n: 50}} },
		target: map[int]figures{4: {worst: 1.5, refused: 100}, 8: {worst: 1.3, refused: 4}, 16: {worst: 1.3, refused: 4}}, alone: 22},
	{name: "quota", new: func() limiter { return quota(2*time.Second, "ietf") },
		target: map[int]figures{4: {worst: 1.5, refused: 100}, 8: {worst: 1.2, refused: 1}, 16: {worst: 1.2, refused: 1}}, alone: 1,
		apart: map[int]figures{8: {worst: 1.2, refused: 1}, 16: {worst: 1.2, refused: 2}}},
	// GitHub's reset is an epoch second rounded up: windows end up to a
	// second before it, which the gate learns.
	{name: "quota, GitHub's reset", new: func() limiter { return quota(2*time.Second, "github") },
		target: map[int]figures{4: {worst: 1.5, refused: 100}, 8: {worst: 1.2, refused: 1}, 16: {worst: 1.2, refused: 1}}, alone: 1,
		apart: map[int]figures{8: {worst: 1.2, refused: 1}, 16: {worst: 1.2, refused: 2}}},
	// GitHub's windows, each opened by the first request after the last
	// one ended: a run sharing the model learns how long they last after
	// the request that opened them; runs sharing nothing mostly go by
	// what the fixed reading says, each opening few.
	{name: "quota opened, GitHub's reset", new: func() limiter { return openedQuota(2*time.Second, "github") },
		target: map[int]figures{4: {worst: 1.5, refused: 100}, 8: {worst: 1.2, refused: 1}, 16: {worst: 1.2, refused: 1}}, alone: 1,
		apart: map[int]figures{8: {worst: 1.3, refused: 1}, 16: {worst: 1.3, refused: 2}},
		// Late answers out of order blur which run opened a window: the
		// model that read windows as fixed alone reached 1.19x and 1.1%.
		busy: figures{worst: 1.2, refused: 2}},
	{name: "quota to the millisecond", new: func() limiter { return quota(2*time.Second, "discord") },
		target: map[int]figures{4: {worst: 1.5, refused: 100}, 8: {worst: 1.2, refused: 1}, 16: {worst: 1.2, refused: 1}}, alone: 1,
		apart: map[int]figures{8: {worst: 1.2, refused: 1}, 16: {worst: 1.2, refused: 2}}},
}

// fleetReads is each plan's reads beside its list, as in make bench.
const fleetReads = 40

// machine is where a fleet runs: the network between its plans and the
// service, and how far apart its plans start.
type machine struct {
	net    network
	launch time.Duration
}

var (
	// quiet has room to spare: answers on loopback at once, plans started
	// within 300 ms.
	quiet = machine{net: networks[0].net, launch: 300 * time.Millisecond}
	// busy is crowded: answers take up to 150 ms, and plans start up to
	// 2 s apart. Sixteen plans sharing nothing behind a quota are refused
	// here as often as through Terraform on a 2-core machine, when each
	// measured its share from a window's first answer (6% to 7%).
	busy = machine{net: network{rtt: networks[0].net.rtt, jitter: networks[0].net.jitter, work: 150 * time.Millisecond}, launch: 2 * time.Second}
)

// runFleet simulates k plans at once on m behind lim, their Pacers sharing
// one state or not, and returns the fleet's time against the ideal (every
// request at 50 a second from the first plan's start) and the share of
// requests refused, in percent.
func runFleet(seed uint64, k int, lim limiter, m machine, share bool) (ratio, refused float64) {
	store := &memStore{}
	n := 0
	pacer := func(c Clock) *Pacer {
		p := defaultPacer(c)
		if share {
			p.Share(store.member(fmt.Sprint(n)))
		}
		n++
		return p
	}
	ratio, refused, _ = fleetTook(simulateFleet(seed, k, fleetReads, lim, m.net, m.launch, pacer, 0))
	return ratio, refused
}

// fleetTook is a simulated fleet's slowest plan against the ideal (every
// request at 50 a second from the first plan's start), the share of its
// requests refused, in percent, and its requests.
func fleetTook(plans []simPlan) (ratio, refused float64, requests int) {
	var took time.Duration
	refusals := 0
	for _, pl := range plans {
		took = max(took, pl.took) // each from its own start: the slowest is at least this
		requests += pl.requests
		refusals += pl.refused
	}
	ideal := perSecond(50, float64(len(plans)*(fleetReads+1)))
	return float64(took) / float64(ideal), 100 * float64(refusals) / float64(requests), requests
}

// TestShare_fleetPacesAsOne: plans on one machine, sharing their pace,
// meet the limit as one client would; sharing nothing, none fails and
// at most a quarter of their requests are refused, and behind a quota
// announced on every answer they meet it as one client would too.
func TestShare_fleetPacesAsOne(t *testing.T) {
	t.Parallel()
	for _, c := range fleetCases {
		for _, k := range []int{4, 8, 16} {
			t.Run(fmt.Sprintf("%s/%d", c.name, k), func(t *testing.T) {
				t.Parallel()
				var got, apart figures
				for seed := range uint64(3) {
					r, s := runFleet(seed, k, c.new(), quiet, true)
					got.worst, got.refused = max(got.worst, r), max(got.refused, s)
					if k == 8 || c.apart[k] != (figures{}) {
						r, s := runFleet(seed, k, c.new(), quiet, false)
						apart.worst, apart.refused = max(apart.worst, r), max(apart.refused, s)
					}
				}
				t.Logf("shared: worst %.3fx, %.2f%% refused; apart: worst %.3fx, %.2f%% refused", got.worst, got.refused, apart.worst, apart.refused)
				if want := c.target[k]; !want.within(got) {
					t.Errorf("worst %.3fx, %.2f%% refused: want <= %.2fx, <= %.1f%%", got.worst, got.refused, want.worst, want.refused)
				}
				if k == 8 && apart.refused > c.alone {
					t.Errorf("sharing nothing, %.2f%% refused: want <= %.0f%%", apart.refused, c.alone)
				}
				if want := c.apart[k]; want != (figures{}) && !want.within(apart) {
					t.Errorf("sharing nothing, worst %.3fx, %.2f%% refused: want <= %.2fx, <= %.1f%%", apart.worst, apart.refused, want.worst, want.refused)
				}
			})
		}
	}
}

// TestShare_stepsDoNotGrowWithTheFleet: a fleet's members waiting for the
// pace take turns, so the store's steps per request stay as few at 256
// members as at 16, and the slowest plan within the fleets' target.
func TestShare_stepsDoNotGrowWithTheFleet(t *testing.T) {
	t.Parallel()
	for _, k := range []int{16, 64, 256} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			t.Parallel()
			store := &memStore{}
			n := 0
			plans := simulateFleet(1, k, fleetReads, silent{newBucket(50, 10)}, quiet.net, 2*time.Second, func(c Clock) *Pacer {
				p := defaultPacer(c)
				p.Share(store.member(fmt.Sprint(n)))
				n++
				return p
			}, 0)
			ratio, refused, requests := fleetTook(plans)
			steps := float64(store.steps) / float64(requests)
			t.Logf("K = %d: slowest %.3fx, %.2f%% refused, %.1f steps a request", k, ratio, refused, steps)
			// Each member polling within SharedPoll took 12, 40 and 143.
			if steps > 7 || ratio > 1.3 {
				t.Errorf("%.1f steps a request, slowest %.3fx: want at most 7, and 1.3x", steps, ratio)
			}
		})
	}
}

// TestShare_aWaiterThatGivesUpLeavesItsTurn: a member held by the pace
// behind another waits a token more for it; once the other's waiter gives
// up, the member's turn is the next token.
func TestShare_aWaiterThatGivesUpLeavesItsTurn(t *testing.T) {
	clock, store, ps := sharedPacers("a", "b")
	a, b := ps[0], ps[1]
	for {
		if _, _, ok := a.askOK(bg, clock.now); !ok {
			break // a waits for the pace
		}
	}
	gap := time.Duration(float64(time.Second) / float64(a.pace.Limit()))
	if _, wait, ok := b.askOK(bg, clock.now); ok || wait <= gap {
		t.Fatalf("b went %v, or waits %v: want a turn behind a's, over %v", ok, wait, gap)
	}
	ctx, cancel := context.WithDeadline(bg, clock.now.Add(time.Millisecond))
	defer cancel()
	if _, err := a.Wait(ctx); !errors.Is(err, ErrOutlastsDeadline) {
		t.Fatalf("a's wait: %v, want it to give up", err)
	}
	if st, err := decodeState(store.data); err != nil || !st.members["a"].Waiting.IsZero() {
		t.Fatalf("a in the state: %+v (%v): want it no longer waiting", st.members["a"], err)
	}
	if _, wait, ok := b.askOK(bg, clock.now); ok || wait > gap {
		t.Fatalf("b went %v, or waits %v: want the next token's time, at most %v", ok, wait, gap)
	}
}

// TestShare_quotaApartOnABusyMachine: plans sharing nothing behind an
// announced quota still spend it as one client would when answers come
// late and out of order, and plans join while others spend: each measures
// its share from the most remaining any of its answers announced, and one
// joining others takes what fell before its first answer as theirs until
// its answers say.
func TestShare_quotaApartOnABusyMachine(t *testing.T) {
	t.Parallel()
	for _, c := range fleetCases {
		if c.apart == nil {
			continue // no quota announced
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// Ten fleets: the share refused of three varies more from
			// seed to seed than from one model to the next.
			var got figures
			const fleets = 10
			for seed := range uint64(fleets) {
				r, s := runFleet(seed, 16, c.new(), busy, false)
				got.worst, got.refused = max(got.worst, r), got.refused+s/fleets
			}
			t.Logf("K = 16 apart: worst %.3fx, %.2f%% refused on average", got.worst, got.refused)
			// The targets of a quiet machine are 1.2x and 1%; the model
			// reaches 1.08x and 1.4% here, and through Terraform, on a
			// machine as busy, meets them (make bench-fleet).
			want := figures{worst: 1.15, refused: 1.5}
			if c.busy != (figures{}) {
				want = c.busy
			}
			if !want.within(got) {
				t.Errorf("worst %.3fx, %.2f%% refused on average: want <= %.2fx, <= %.1f%%", got.worst, got.refused, want.worst, want.refused)
			}
		})
	}
}

// TestShare_onePlanAsAlone: one plan sharing its state with nobody paces
// as it does alone. Not plan by plan: the shared pace's tokens round-trip to
// the nanosecond (rounded early) and its waiters poll, which moves a refusal
// by a little and the plan's path after it, either way, and may cost one
// refusal more near the end: a fifth of a plan this short. Over the seeds
// the median plan takes as long.
func TestShare_onePlanAsAlone(t *testing.T) {
	t.Parallel()
	for _, c := range append(slices.Clone(unannounced[:3]), announced[2]) {
		var ratios []float64
		for seed := range uint64(10) {
			alone := simulate(seed, simReads, c.new(), networks[0].net, defaultPacer, 0)
			store := &memStore{}
			shared := simulate(seed, simReads, c.new(), networks[0].net, func(clock Clock) *Pacer {
				p := defaultPacer(clock)
				p.Share(store.member("only"))
				return p
			}, 0)
			ratios = append(ratios, shared.ratio(alone.took))
			if shared.refused > alone.refused+1 {
				t.Errorf("%s, seed %d: shared refused %d against %d alone", c.name, seed, shared.refused, alone.refused)
			}
		}
		slices.Sort(ratios)
		if median := ratios[len(ratios)/2]; median > 1.01 || ratios[len(ratios)-1] > 1.2 {
			t.Errorf("%s: shared took a median %.3fx alone's, at worst %.3fx; want <= 1.01x, <= 1.2x", c.name, median, ratios[len(ratios)-1])
		}
	}
}

// TestShare_deadMemberFreesItsPlace: a process that ends with a request in
// flight holds the others back no longer than LivenessEvery.
func TestShare_deadMemberFreesItsPlace(t *testing.T) {
	clock, store, ps := sharedPacers("a", "b")
	a, b := ps[0], ps[1]
	if _, _, ok := a.askOK(bg, clock.now); !ok {
		t.Fatal("the first request was held")
	}
	// The first request goes alone: its answer says whether a quota is
	// announced.
	clock.now = clock.now.Add(time.Second / StartRate)
	if _, wait, ok := b.askOK(bg, clock.now); ok || wait != untilAnswered {
		t.Fatalf("b went beside a's first request (wait %v)", wait)
	}
	store.gone["a"] = true
	clock.now = clock.now.Add(LivenessEvery / 2)
	if _, _, ok := b.askOK(bg, clock.now); ok {
		t.Fatal("b went before the next liveness check")
	}
	clock.now = clock.now.Add(LivenessEvery)
	if _, _, ok := b.askOK(bg, clock.now); !ok {
		t.Fatal("b is still held by a process that ended")
	}
	if st, err := decodeState(store.data); err != nil || len(st.members) != 1 || st.members["b"].InFlight != 1 {
		t.Fatalf("members %v (%v): want b's one request", st.members, err)
	}
}

// TestShare_joinsAtThePaceFound: a process that starts while others run
// takes the pace they found, and their pause.
func TestShare_joinsAtThePaceFound(t *testing.T) {
	clock, store, ps := sharedPacers("a")
	a := ps[0]
	tk, _, _ := a.askOK(bg, clock.now)
	a.Done(tk, Answer{})
	a.Release(tk)
	for range 5 {
		clock.now = clock.now.Add(5 * time.Millisecond)
		if tk, _, ok := a.askOK(bg, clock.now); ok {
			a.Done(tk, Answer{Refused: true, RetryAfter: 3 * time.Second})
			a.Release(tk)
			break
		}
	}
	b := defaultPacer(clock)
	b.Share(store.member("b"))
	if _, wait, ok := b.askOK(bg, clock.now); ok || wait < 2*time.Second {
		t.Fatalf("b went or waits %v: want the 3 s pause a was asked for", wait)
	}
	if got := b.pace.Limit(); got != a.pace.Limit() || got >= StartRate {
		t.Fatalf("b's pace %v, a's %v: want a's, cut", got, a.pace.Limit())
	}
}

// placeMember is a member of a memStore that takes slight changes
// (InPlace): it saves them as any other, and keeps whether each was.
type placeMember struct {
	member
	slight []bool
}

func (m *placeMember) UpdateInPlace(ctx context.Context, f func([]byte) ([]byte, bool, error)) error {
	var slight bool
	err := m.Update(ctx, func(saved []byte) ([]byte, error) {
		next, s, err := f(saved)
		slight = s
		return next, err
	})
	if err == nil {
		m.slight = append(m.slight, slight)
	}
	return err
}

// TestShare_aPollHeldAsItWasIsSlight: of a member's steps, only an ask held
// by the pace as the ask before it was, its turn kept, is slight; a request
// let go, the first ask held (its turn begins), an answer and a release are
// not, nor is a poll once a step ran on the copy (its counts unsaved).
func TestShare_aPollHeldAsItWasIsSlight(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	store := &memStore{gone: map[string]bool{}}
	m := &placeMember{member: store.member("a")}
	a := defaultPacer(clock)
	a.Share(m)
	first, _, _ := a.askOK(bg, clock.now) // it goes alone
	a.Done(first, Answer{})
	a.Release(first)
	clock.now = clock.now.Add(time.Second)
	tk, _, ok := a.askOK(bg, clock.now)
	if _, _, hold := a.ask(bg, clock.now); !ok || hold != HoldPace {
		t.Fatalf("let go %v, then held by %v: want one let go, then the pace", ok, hold)
	}
	clock.now = clock.now.Add(time.Millisecond)
	if _, _, hold := a.ask(bg, clock.now); hold != HoldPace {
		t.Fatalf("a poll held by %v: want the pace", hold)
	}
	a.Done(tk, Answer{})
	store.stale = fmt.Errorf("saved since: %w", ErrBusy)
	a.Release(tk) // on the copy
	store.stale = nil
	clock.now = clock.now.Add(time.Millisecond)
	a.ask(bg, clock.now)
	want := []bool{false, false, false, false, false, true, false, false}
	if !slices.Equal(m.slight, want) {
		t.Fatalf("slight steps %v, want %v", m.slight, want)
	}
}

// TestShare_oldStateIsForgotten: a state no step touched for Forget, with
// nothing in flight and no pause to come, starts afresh.
func TestShare_oldStateIsForgotten(t *testing.T) {
	clock, store, ps := sharedPacers("a")
	a := ps[0]
	tk, _, _ := a.askOK(bg, clock.now)
	a.Done(tk, Answer{Refused: true})
	a.Release(tk)
	clock.now = clock.now.Add(Forget + time.Second)
	b := defaultPacer(clock)
	b.Share(store.member("b"))
	if _, _, ok := b.askOK(bg, clock.now); !ok || refusedRate(&b.model) != 0 || b.pace.Limit() != StartRate {
		t.Fatalf("b took up an old state: the rate refused %v, pace %v", refusedRate(&b.model), b.pace.Limit())
	}
}

// TestShare_goesAloneOnAStoreThatFails: a store that fails leaves the
// Pacer alone, saying why, counting only its own requests.
func TestShare_goesAloneOnAStoreThatFails(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	store := &memStore{fail: errors.New("permission denied")}
	p := New(clock, 1, 0, 30*time.Second)
	p.Share(store.member("a"))
	tk, _, ok := p.askOK(bg, clock.now)
	if !ok {
		t.Fatal("the first request was held")
	}
	if err := p.Alone(); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("Alone() = %v: want it to say why", err)
	}
	if _, wait, ok := p.askOK(bg, clock.now); ok || wait != untilAnswered {
		t.Fatal("a second request went beside the first, past max_concurrent 1")
	}
	p.Done(tk, Answer{})
	p.Release(tk)
	clock.now = clock.now.Add(time.Second)
	if _, _, ok := p.askOK(bg, clock.now); !ok || p.inFlight != 1 {
		t.Fatalf("alone, the next request waits (in flight %d)", p.inFlight)
	}
}

// TestShare_healsADamagedState: a state that is not one, cut short, of
// another format, or whose pace is nothing (which would let every request
// go at once) is replaced by a fresh one, with a note, and sharing goes on:
// the next Pacer meets the first in the new state.
func TestShare_healsADamagedState(t *testing.T) {
	nothing := filled()
	nothing.model.phase = following{} // no rate refused, and not doubling
	for name, data := range map[string][]byte{
		"not a state":       []byte(`{"version": 1}`),
		"cut short":         validState()[:40],
		"other format":      append([]byte(stateMagic), '1', 9, 9),
		"a pace of nothing": encodeState(&nothing),
	} {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
			store := &memStore{data: data, gone: map[string]bool{}}
			p := New(clock, 1, 0, 30*time.Second)
			p.Share(store.member("a"))
			if _, _, ok := p.askOK(bg, clock.now); !ok {
				t.Fatal("the first request was held")
			}
			if err := p.Alone(); err != nil {
				t.Fatalf("Alone() = %v: want it still sharing", err)
			}
			if e := eventSaying(p, "afresh"); e == "" {
				t.Fatal("no event says the state started afresh")
			}
			if e := eventSaying(p, "afresh"); e != "" {
				t.Fatalf("told twice: %s", e)
			}
			st, err := decodeState(store.data)
			if err != nil || st.members["a"].InFlight != 1 {
				t.Fatalf("the state was not replaced: %+v (%v)", st.members, err)
			}
			q := New(clock, 1, 0, 30*time.Second)
			q.Share(store.member("b"))
			// Alone, b would go at once; shared, a's request spent the pace.
			if _, _, ok := q.askOK(bg, clock.now); ok {
				t.Fatal("b went at once beside a's first request: they do not share")
			}
		})
	}
}

// TestShare_aStoreThatHealedGoesOnSharing: a step the store ran on a
// fresh state in place of a damaged one shares, with a note.
func TestShare_aStoreThatHealedGoesOnSharing(t *testing.T) {
	clock, store, ps := sharedPacers("a")
	p := ps[0]
	store.healed = fmt.Errorf("%w: cut short", ErrHealed)
	if _, _, ok := p.askOK(bg, clock.now); !ok || p.Alone() != nil {
		t.Fatalf("went %v, alone %v: want it to go, sharing", ok, p.Alone())
	}
	if e := eventSaying(p, "afresh"); !strings.Contains(e, ErrHealed.Error()) {
		t.Fatalf("event %q: want the healed state", e)
	}
	if st, err := decodeState(store.data); err != nil || st.members["a"].InFlight != 1 {
		t.Fatalf("members %+v (%v): want a's request saved", st.members, err)
	}
}

// TestShare_aStoreAwayGoesAloneUntilItAnswers: while the store is away, the
// steps run on the Pacer's own model with its own requests alone (the
// others' in flight no longer hold it), noted once for the whole absence;
// the first step it answers shares again.
func TestShare_aStoreAwayGoesAloneUntilItAnswers(t *testing.T) {
	clock, store, ps := sharedPacers("a", "b")
	a, b := ps[0], ps[1]
	tb, _, _ := b.askOK(bg, clock.now)
	b.Done(tb, Answer{}) // answered, not yet released: in flight
	clock.now = clock.now.Add(time.Second)
	ta, _, _ := a.askOK(bg, clock.now)
	if a.inFlight != 2 || !ta.Shared() {
		t.Fatalf("a counts %d in flight, shared %v: want b's too, shared", a.inFlight, ta.Shared())
	}
	store.fail = fmt.Errorf("redis: connection refused: %w", ErrAway)
	a.Done(ta, Answer{})
	if a.inFlight != 1 || a.Alone() != nil {
		t.Fatalf("a counts %d in flight, alone %v: want its own one, still sharing", a.inFlight, a.Alone())
	}
	a.Release(ta)
	if e := eventSaying(a, "is away"); !strings.Contains(e, ErrAway.Error()) {
		t.Fatalf("event %q: want the store away", e)
	}
	clock.now = clock.now.Add(time.Second)
	ta, _, _ = a.askOK(bg, clock.now)
	if ta.Shared() {
		t.Error("a request let go while the store is away says it was shared")
	}
	a.Done(ta, Answer{})
	if e := eventSaying(a, "away"); e != "" {
		t.Fatalf("%s again in the same absence", e)
	}
	store.fail = nil
	a.Release(ta)
	if a.inFlight != 1 {
		t.Fatalf("a counts %d in flight once the store answers: want b's one", a.inFlight)
	}
	if e := eventSaying(a, "answers again"); e == "" {
		t.Fatal("no event says the store is back")
	}
	store.fail = fmt.Errorf("redis: i/o timeout: %w", ErrAway)
	b.Release(tb)
	if e := eventSaying(b, "is away"); !strings.Contains(e, ErrAway.Error()) {
		t.Fatalf("event %q: want a new absence told", e)
	}
}

// heldStore is a member whose every Update, once armed, waits for the test
// to let it go on: a store whose round trip takes as long as the test says.
type heldStore struct {
	member
	entered, release chan struct{} // nil: not armed
	updates          atomic.Int32  // armed Updates that saved
}

func (h *heldStore) Update(ctx context.Context, f func([]byte) ([]byte, error)) error {
	if h.release == nil {
		return h.member.Update(ctx, f)
	}
	h.entered <- struct{}{}
	<-h.release
	h.updates.Add(1)
	return h.member.Update(ctx, f)
}

// TestShare_stepsQueuedWhileTheStoreAnswersShareOneRoundTrip: while one
// step waits on the store, the process's other answers and releases return
// at once, and the next round trip carries them all, with an ask that waits
// for it and runs after them.
func TestShare_stepsQueuedWhileTheStoreAnswersShareOneRoundTrip(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	store := &memStore{gone: map[string]bool{}}
	held := &heldStore{member: store.member("a")}
	p := defaultPacer(clock)
	p.Share(held)
	tk1, _, _ := p.askOK(bg, clock.now)
	p.Done(tk1, Answer{})
	clock.now = clock.now.Add(time.Second / StartRate)
	tk2, _, ok := p.askOK(bg, clock.now)
	if !ok {
		t.Fatal("the second request was held")
	}
	clock.now = clock.now.Add(time.Second / StartRate)

	held.entered, held.release = make(chan struct{}), make(chan struct{})
	go p.Done(tk2, Answer{})
	<-held.entered // its round trip under way
	p.Release(tk1) // returns at once: queued
	asked := make(chan bool)
	go func() {
		_, _, ok := p.askOK(bg, clock.now)
		asked <- ok
	}()
	for queued := 0; queued < 2; runtime.Gosched() {
		p.mu.Lock()
		queued = len(p.shared.queue)
		p.mu.Unlock()
	}
	held.release <- struct{}{} // the answer's round trip ends
	<-held.entered             // the next one carries the release and the ask
	held.release <- struct{}{}
	if !<-asked {
		t.Fatal("the ask queued behind the release was held")
	}
	if n := held.updates.Load(); n != 2 {
		t.Fatalf("%d round trips: want 2, the answer's, then the release's and the ask's", n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, err := decodeState(store.data); err != nil || st.members["a"] != (counts{InFlight: 2, Unanswered: 1}) {
		t.Fatalf("members %+v (%v): want a's second request answered, and the third in flight", st.members, err)
	}
}

// TestShare_aWaiterJoinsARoundTripUnderWay: a waiter that finds its
// process's round trip to the store under way asks in the next one, without
// waiting for its turn at asking, which another waiter holds.
func TestShare_aWaiterJoinsARoundTripUnderWay(t *testing.T) {
	clock := &syncClock{now: time.Unix(1_800_000_000, 0)}
	store := &memStore{gone: map[string]bool{}}
	held := &heldStore{member: store.member("a")}
	p := defaultPacer(clock)
	p.Share(held)
	tk, _, _ := p.askOK(bg, clock.Now())
	p.Done(tk, Answer{})
	p.Release(tk)
	clock.add(time.Second / StartRate)
	tk, _, _ = p.askOK(bg, clock.Now())
	p.Done(tk, Answer{})
	clock.add(time.Second / StartRate)

	held.entered, held.release = make(chan struct{}), make(chan struct{})
	go p.Release(tk)
	<-held.entered
	p.shared.turn <- struct{}{} // another waiter's turn
	went := make(chan error)
	go func() {
		_, err := p.Wait(bg)
		went <- err
	}()
	for queued := 0; queued < 1; runtime.Gosched() {
		p.mu.Lock()
		queued = len(p.shared.queue)
		p.mu.Unlock()
	}
	held.release <- struct{}{}
	<-held.entered
	held.release <- struct{}{}
	if err := <-went; err != nil {
		t.Fatal(err)
	}
}

// syncClock is a fakeClock that goroutines may share.
type syncClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *syncClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (*syncClock) After(time.Duration) <-chan time.Time { return nil }

func (c *syncClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// farStore is a heldStore whose armed Updates take trip on the clock once
// their step ran: a store whose answer comes back a round trip later.
type farStore struct {
	heldStore
	clock *syncClock
	trip  time.Duration
}

func (f *farStore) Update(ctx context.Context, step func([]byte) ([]byte, error)) error {
	err := f.heldStore.Update(ctx, step)
	if f.release != nil {
		f.clock.add(f.trip)
	}
	return err
}

// TestShare_letsGoAheadWithinTheStoresRoundTrip: the asks queued behind a
// round trip to the store go ahead of their tokens by that round trip, each
// at its token's time, and the next waits; the state keeps the tokens spent
// ahead, so that another Pacer waits for the token after them; and the
// refusal of a request let go ahead is measured against the rate requests
// went at, not its gap, which was the pace's.
func TestShare_letsGoAheadWithinTheStoresRoundTrip(t *testing.T) {
	clock := &syncClock{now: time.Unix(1_800_000_000, 0)}
	store := &memStore{gone: map[string]bool{}}
	const trip = 20 * time.Millisecond // two tokens at StartRate
	far := &farStore{heldStore: heldStore{member: store.member("a")}, clock: clock, trip: trip}
	a := defaultPacer(clock)
	a.Share(far)
	first, _, _ := a.askOK(bg, clock.Now())
	a.Done(first, Answer{})
	clock.add(time.Second / StartRate)

	far.entered, far.release = make(chan struct{}), make(chan struct{})
	type asked struct {
		t    Ticket
		wait time.Duration
		ok   bool
	}
	answers := make(chan asked)
	ask := func() {
		t, wait, ok := a.askOK(bg, clock.Now())
		answers <- asked{t, wait, ok}
	}
	go ask()
	<-far.entered // its round trip under way: four more asks queue behind it
	for range 4 {
		go ask()
	}
	for queued := 0; queued < 4; runtime.Gosched() {
		a.mu.Lock()
		queued = len(a.shared.queue)
		a.mu.Unlock()
	}
	went := clock.Now()
	far.release <- struct{}{}
	if got := <-answers; !got.ok || !got.t.sent.Equal(went) {
		t.Fatalf("the ask that made the round trip: went %v at %v, want at %v", got.ok, got.t.sent, went)
	}
	<-far.entered
	far.release <- struct{}{}
	var sent []time.Time
	var held []time.Duration
	var last Ticket
	for range 4 {
		got := <-answers
		if got.ok {
			sent = append(sent, got.t.sent)
			if got.t.sent.After(last.sent) {
				last = got.t // the last let go, ahead
			}
		} else {
			held = append(held, got.wait)
		}
	}
	slices.SortFunc(sent, time.Time.Compare)
	token, now := time.Second/StartRate, went.Add(trip)
	if want := []time.Time{now, now.Add(token), now.Add(2 * token)}; !slices.Equal(sent, want) || len(held) != 1 {
		t.Fatalf("let go at %v, %v held: want %v, and one held", sent, held, want)
	}
	if want := 3*token - trip; held[0] != want {
		t.Fatalf("the fourth waits %v: want %v, counted from its step", held[0], want)
	}
	far.entered, far.release = nil, nil

	b := defaultPacer(clock)
	b.Share(store.member("b"))
	// a's fourth waits for the pace since before b: b's turn is the token
	// after the next.
	gap := time.Duration(float64(time.Second) / float64(a.pace.Limit()))
	if _, wait, ok := b.askOK(bg, clock.Now()); ok || wait <= gap || wait > token+gap {
		t.Fatalf("b went %v, or waits %v, beside the tokens a spent ahead and a's waiter: want to wait the next one's time and a turn", ok, wait)
	}

	a.Done(last, Answer{Refused: true})
	if want := a.sentRate(a.pace.Limit()); refusedRate(&a.model) != want || want >= 1/last.gap.Seconds() {
		t.Fatalf("the refusal took %v a second as the rate refused: want the rate they went at, %v", refusedRate(&a.model), want)
	}
}

// validState is a state a Pacer saved after a few steps.
func validState() []byte {
	clock, store, ps := sharedPacers("a")
	p := ps[0]
	for range 3 {
		tk, _, _ := p.askOK(bg, clock.now)
		p.Done(tk, Answer{})
		clock.now = clock.now.Add(20 * time.Millisecond)
	}
	return store.data
}

// TestState_readsWhatItWrites: a state decodes to what was encoded, and
// every shorter piece of it is refused.
func TestState_readsWhatItWrites(t *testing.T) {
	b := validState()
	st, err := decodeState(b)
	if err != nil || len(st.model.sent) != 3 || st.members["a"].InFlight != 3 || !bytes.Equal(encodeState(&st), b) {
		t.Fatalf("decoded %+v (%v)", st, err)
	}
	for n := range len(b) {
		if _, err := decodeState(b[:n]); err == nil {
			t.Fatalf("%d bytes of %d decoded", n, len(b))
		}
	}
}

// TestShare_stateHoldsNoHeaderText: what a service sent stays out of the
// shared state but for the numbers read from it.
func TestShare_stateHoldsNoHeaderText(t *testing.T) {
	clock, store, ps := sharedPacers("a")
	p := ps[0]
	tk, _, _ := p.askOK(bg, clock.now)
	h := http.Header{"Ratelimit": {`"secret-token";r=5;t=10`}, "Ratelimit-Policy": {`"secret-token";q=100;w=10`}}
	p.Done(tk, Answer{Quota: h})
	p.Release(tk)
	if strings.Contains(string(store.data), "secret") || !p.gate.known || p.gate.quota.Remaining != 5 {
		t.Fatalf("state %s (quota %+v)", store.data, p.gate.quota)
	}
}

// askOK is ask, telling only whether the request went.
func (p *Pacer) askOK(ctx context.Context, now time.Time) (Ticket, time.Duration, bool) {
	t, wait, hold := p.ask(ctx, now)
	return t, wait, hold == HoldNone
}

// eventSaying is the first of p's events since the last call whose
// message holds text, or "" for none.
func eventSaying(p *Pacer, text string) string {
	for _, e := range p.Events() {
		if strings.Contains(e.Message, text) {
			return fmt.Sprint(e.Message, " ", e.Fields)
		}
	}
	return ""
}
