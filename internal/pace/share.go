package pace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// The parameters of sharing (package doc).
const (
	// Forget: a state no step touched for this long, with nobody's request
	// in flight, no pause and no quota to come, is old news.
	Forget = 30 * time.Second
	// LivenessEvery is how often the members with requests in flight are
	// checked for a process that ended without a word.
	LivenessEvery = time.Second
	// SharedPoll is the longest a shared Pacer's waiter waits past its
	// turn (turnsAhead) before it asks again: another process's answer
	// may let it go, and only its own process's answers wake it.
	SharedPoll = 50 * time.Millisecond
	// BusyFor is how long a run's steps may find the store busy without
	// running, one after another, before it takes the state for held by a
	// run that stopped (a lock held under Ctrl-Z), and lets its requests go
	// on its own copy, at its share (alone.go), until a step runs: three
	// steps' bounded waits, so that with the last one's, a request waits a
	// second at most. Steps that ran, and found others saving first, say
	// the fleet goes on.
	BusyFor = 750 * time.Millisecond
)

// StateFormat is the saved state's format version. A store keeps each
// version's state under a name of its own, so that provider versions side
// by side each share among themselves (internal/paceshare). Change it with
// the encoding (state.go): its golden test says when.
const StateFormat = "11"

// ErrBusy is what a Shared store's Update returns (wrapped) when other
// Pacers kept it from its step for its bounded time (holding its lock, or
// saving first): the step runs on this process's own copy of the model,
// and the next one shares again.
var ErrBusy = errors.New("the shared pace is busy")

// ErrAway is what a Shared store's Update returns (wrapped) when the store
// cannot be reached, or failed the step: the step runs on this process's own
// copy of the model, with its own requests alone, and the store says when
// it is asked again.
var ErrAway = errors.New("the shared pace's store is away")

// ErrHealed is what a Shared store's Update returns (wrapped) when the step
// ran on a fresh state that replaced a damaged one: sharing goes on.
var ErrHealed = errors.New("the shared state was damaged and is started afresh")

// Shared is where Pacers that pace as one keep the model's state between
// their steps (internal/paceshare keeps it on local disk).
type Shared interface {
	// Update calls f with the state last saved (nil when none was, or
	// when it was damaged: then, once f's state is saved, it returns
	// ErrHealed), and saves what f returns, unless f fails, as one step
	// that no other Pacer's interleaves: under a lock that excludes them
	// (internal/paceshare), or by calling f again, on the state saved
	// since, when another saved first (internal/paceredis); what the last
	// call returns is saved. It waits for a bounded time (ErrBusy), and no
	// longer than ctx.
	Update(ctx context.Context, f func(saved []byte) ([]byte, error)) error
	// Member names this process among those sharing the state.
	Member() string
	// Gone tells which of members no longer count: their process ended,
	// or is stopped. Update's lock is held when it is asked.
	Gone(members []string) []string
}

// InPlace is a Shared store that orders saves by a version, refusing one
// made on a state saved since (internal/paceredis). A slight change, one
// that the next step saved counts again (a waiter's poll, held as it was),
// it may keep in place, after no other save, or drop when another saved
// since: so the polls of waiters do not make the others' saves stale.
type InPlace interface {
	// UpdateInPlace is Update, with f telling whether its change is
	// slight.
	UpdateInPlace(ctx context.Context, f func(saved []byte) (next []byte, slight bool, err error)) error
}

// sharing is a shared Pacer's own part.
type sharing struct {
	store  Shared
	member string
	// turn is held by the waiter of this process that asks: the others
	// wait for it, rather than all reading the state.
	turn  chan struct{}
	peers map[string]counts // the other members with requests let go, as last loaded
	// The steps waiting for the next commit; committed is closed once it
	// ran them, and committing is true while a commit is under way.
	queue      []queuedStep
	committed  chan struct{}
	committing bool
	ended      error     // why sharing ended; nil while it lasts
	away       bool      // the store was away at the last step (ErrAway)
	alone      bool      // p's model is its share of the copy (alone.go) until the next load
	busySince  time.Time // when steps began to find the store busy without running, one after another; zero since one ran
}

// queuedStep is a step waiting for a commit. An ask's busy runs in op's
// place when the store is busy: its request does not go; its shared is
// set to whether its commit ran it on the shared state, and saved it; and
// its slight tells, once op ran, whether its change is slight (InPlace;
// nil: it is not).
type queuedStep struct {
	op     func(now time.Time)
	busy   func()
	shared *bool
	slight func() bool
}

// counts are one member's requests let go: not yet released, not yet
// answered; and when its waiter held by the pace began to wait (zero for
// none), which orders the members' turns.
type counts struct {
	InFlight   int
	Unanswered int
	Waiting    time.Time
}

// Share makes p pace as one with every Pacer sharing store, from its next
// step. Call it before the first Wait.
func (p *Pacer) Share(store Shared) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shared = &sharing{store: store, member: store.Member(), turn: make(chan struct{}, 1), committed: make(chan struct{})}
}

// Alone says why a Pacer given a Shared paces alone: nil while it shares,
// or when it was never given one.
func (p *Pacer) Alone() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shared == nil {
		return nil
	}
	return p.shared.ended
}

// pollAfter is how long a waiter waits before asking again: wait, or,
// while shared, SharedPoll at most past the turns of the members ahead of
// it. p.mu is held.
func (p *Pacer) pollAfter(wait time.Duration) time.Duration {
	if p.shared != nil && p.shared.ended == nil {
		return min(wait, p.ahead+SharedPoll)
	}
	return wait
}

// answersWake tells whether an answer of this process wakes the waiter
// the last ask held: not one waiting for its turn behind other members,
// as an answer never brings the pace's tokens sooner. p.mu is held.
func (p *Pacer) answersWake() bool { return p.ahead == 0 }

// leaveTurn: a waiter gave up, and this process no longer waits for the
// pace until its next ask; the members behind it move up.
func (p *Pacer) leaveTurn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shared != nil && !p.own.Waiting.IsZero() {
		p.step(context.Background(), p.clock.Now(), queuedStep{op: func(time.Time) { p.own.Waiting = time.Time{} }})
	}
}

// turnsAhead is how long the members that began to wait for the pace
// before mine take at the pace, a token each: the members' turns (package
// doc). Those that began at the same time go in their names' order. p.mu
// is held.
func (p *Pacer) turnsAhead(mine time.Time) time.Duration {
	if p.shared == nil {
		return 0
	}
	n := 0
	for name, c := range p.shared.peers {
		if !c.Waiting.IsZero() && (c.Waiting.Before(mine) || c.Waiting.Equal(mine) && name < p.shared.member) {
			n++
		}
	}
	l := float64(p.pace.Limit())
	if n == 0 || l <= 0 || math.IsInf(l, 1) { // no pace to take turns at
		return 0
	}
	return nanos(min(float64(n)/l, p.maxWait.Seconds()) * float64(time.Second))
}

// step runs op, one of the model's steps, on p's own model at now when not
// shared. While sharing lasts, it is queued, and a commit runs it at the
// time it runs, with every step queued beside it, on the shared state
// loaded and saved around them: a step costs the store one round trip
// however many are queued, and the steps of one process never wait on each
// other's round trips. The caller that finds no commit under way commits
// (the queue, its own step among them); one that finds one returns at once,
// or, for an ask (busy set), once the next commit has run its step or busy.
// p.mu is held, and released while the store answers.
func (p *Pacer) step(ctx context.Context, now time.Time, q queuedStep) {
	s := p.shared
	if s == nil || s.ended != nil && !s.committing {
		q.op(now)
		return
	}
	s.queue = append(s.queue, q)
	if s.committing {
		if q.busy != nil {
			committed := s.committed
			p.mu.Unlock()
			<-committed
			p.mu.Lock()
		}
		return
	}
	s.committing = true
	p.commit(ctx)
	if len(s.queue) == 0 {
		s.committing = false
		return
	}
	// Steps queued while the store answered: committed in the background,
	// so that this caller waits for its own round trip only.
	go func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for len(s.queue) > 0 {
			p.commit(context.Background())
		}
		s.committing = false
	}()
}

// commit runs the queued steps as one step of the store's. A store that is
// busy (ErrBusy), or a ctx done while it waits, is busy.go's. A store that
// is away (ErrAway) leaves every step to run on p's own copy of the model
// as last loaded, at p's share of it (alone.go): an event when it goes
// away, and one when it is back. Should the store fail otherwise, sharing
// ends and p goes on alone, at its share. The store may run the steps more
// than once: only the events of the last run are kept; a run it did not
// save (away, or failed) is taken back, and the steps run on the copy.
// p.mu is held, and released while the store answers.
func (p *Pacer) commit(ctx context.Context) {
	s := p.shared
	r := commitRun{ops: s.queue, own: p.own, events: len(p.events), began: p.clock.Now()}
	committed := s.committed
	s.queue, s.committed = nil, make(chan struct{})
	defer close(committed)
	if s.ended != nil {
		r.runAll(r.began)
		return
	}
	var ranAt time.Time
	p.mu.Unlock()
	err := p.update(ctx, func(saved []byte) ([]byte, bool, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		now := p.clock.Now()
		p.own = r.own // as before the steps: a store may run them again
		p.events = p.events[:min(r.events, len(p.events))]
		changed := p.load(saved, now)
		r.loaded = p.copyOwn(now)
		r.runAll(now)
		r.ran, ranAt = true, now
		return p.save(now), !changed && r.slight(), nil
	})
	p.mu.Lock()
	p.lead = 0
	wasAway, now := s.away, p.clock.Now()
	s.away = errors.Is(err, ErrAway)
	for _, q := range r.ops {
		if q.shared != nil {
			*q.shared = err == nil || r.ran && errors.Is(err, ErrHealed)
		}
	}
	busy := errors.Is(err, ErrBusy) || err != nil && ctx.Err() != nil
	s.markBusy(busy, &r)
	if r.ran && err != nil && !busy && !errors.Is(err, ErrHealed) {
		// Not saved: a request let go may hold a token no other member
		// knows was taken. The steps run again on the copy, at the share.
		p.undo(&r)
	}
	if wasAway && !s.away {
		p.event("the shared pace's store answers again: pacing with the other runs", nil)
	}
	switch {
	case err == nil:
		p.lead = min(now.Sub(ranAt), SharedPoll)
		return
	case r.ran && errors.Is(err, ErrHealed):
		p.event("the shared pace's state was damaged: started afresh", map[string]any{"reason": err.Error()})
		return
	case s.away:
		if !wasAway {
			p.event("the shared pace's store is away: pacing alone until it answers", map[string]any{"reason": err.Error()})
		}
		p.goAlone(now)
	case busy && p.holdBusy(&r, err, now):
		return
	case busy:
		p.event("the shared pace's store was busy: a step went on this run's own copy",
			map[string]any{"reason": err.Error(), "busy_for_ms": now.Sub(s.busySince).Milliseconds()})
		p.goAlone(now)
	default:
		s.ended = fmt.Errorf("pacing alone: %w", err)
		p.event("the shared pace's store failed: pacing alone for the rest of the run", map[string]any{"reason": err.Error()})
		p.goAlone(now)
	}
	if !r.ran {
		r.runAll(now)
	}
}

// commitRun is one commit's steps, and what their run left to undo.
type commitRun struct {
	ops    []queuedStep
	own    counts    // p's own requests before the steps
	events int       // and how many events p held
	began  time.Time // when the commit began
	ran    bool      // the store ran the steps (and may not have saved them)
	loaded ownCopy   // the shared state, as their last run loaded it
}

// runAll runs the steps at now.
func (r *commitRun) runAll(now time.Time) {
	for _, q := range r.ops {
		q.op(now)
	}
}

// slight tells, once they ran, that every step's change is slight.
func (r *commitRun) slight() bool {
	for _, q := range r.ops {
		if q.slight == nil || !q.slight() {
			return false
		}
	}
	return true
}

// update runs f as one step of the store's: InPlace's, when it is one.
func (p *Pacer) update(ctx context.Context, f func(saved []byte) ([]byte, bool, error)) error {
	if s, ok := p.shared.store.(InPlace); ok {
		return s.UpdateInPlace(ctx, f)
	}
	return p.shared.store.Update(ctx, func(saved []byte) ([]byte, error) {
		next, _, err := f(saved)
		return next, err
	})
}

// load takes the shared state into p's model, unless it is old news or
// damaged: then the model starts afresh (a damaged one with a note).
// Members gone without a word are dropped, at most every LivenessEvery.
// It tells whether what it took differs from what was saved: then no
// change of the steps is slight.
func (p *Pacer) load(b []byte, now time.Time) (changed bool) {
	s := p.shared
	s.peers, s.alone = nil, false
	if b == nil {
		p.loadNone(now)
		return true
	}
	st, err := decodeState(b)
	if err != nil {
		p.event("the shared pace's state was damaged: started afresh", map[string]any{"reason": err.Error()})
		p.loadNone(now)
		return true
	}
	// p's own counts as saved: a step that ran on the copy since (a busy
	// store) leaves them to the next save.
	mine := st.members[s.member]
	changed = mine.InFlight != p.own.InFlight || mine.Unanswered != p.own.Unanswered || !mine.Waiting.Equal(p.own.Waiting)
	delete(st.members, s.member)
	if len(st.members) > 0 && now.Sub(st.model.checked) >= LivenessEvery {
		for _, gone := range s.store.Gone(slices.Sorted(maps.Keys(st.members))) {
			delete(st.members, gone)
		}
		st.model.checked, changed = now, true
	}
	if len(st.members) == 0 && now.Sub(st.pace.at) > Forget && !st.model.pausedTil.After(now) &&
		!st.model.gate.quota.Reset.After(now) {
		p.loadNone(now)
		return true
	}
	s.peers = st.members
	p.model = st.model
	p.pace = limiterAt(min(rate.Limit(st.pace.limit), p.ceiling), st.pace.tokens, st.pace.at)
	p.inFlight, p.unanswered = p.own.InFlight, p.own.Unanswered
	for _, c := range st.members {
		p.inFlight += c.InFlight
		p.unanswered += c.Unanswered
	}
	return changed
}

// loadNone: nothing shared, or nothing of use: a fresh model, with p's own
// requests.
func (p *Pacer) loadNone(now time.Time) {
	p.begin()
	p.checked = now
	p.countOwn()
}

// countOwn counts p's own requests alone, in flight and unanswered: the
// other members' no longer count.
func (p *Pacer) countOwn() {
	p.shared.peers = nil
	p.inFlight, p.unanswered = p.own.InFlight, p.own.Unanswered
}

// save encodes p's model whole, its pace as it stands at now, with p's
// own requests among the members'.
func (p *Pacer) save(now time.Time) []byte {
	pace := tokenState{limit: float64(p.pace.Limit()), tokens: p.pace.TokensAt(now), at: now}
	return encodeState(&state{members: p.members(), pace: pace, model: p.model})
}

// members are the counts of every member with requests let go: the
// others' as loaded, and p's own.
func (p *Pacer) members() map[string]counts {
	m := maps.Clone(p.shared.peers)
	if m == nil {
		m = map[string]counts{}
	}
	if p.own != (counts{}) {
		m[p.shared.member] = p.own
	}
	return m
}
