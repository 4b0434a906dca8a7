package pace

import (
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
	// SharedPoll is the longest a shared Pacer's waiter waits before it
	// asks again: another process's answer may let it go, and only its
	// own process's answers wake it.
	SharedPoll = 50 * time.Millisecond
)

// stateVersion is the saved state's format. A state of another version
// belongs to another version of the provider: a Pacer leaves it be and
// goes on alone.
const stateVersion = 1

// Shared is where Pacers that pace as one keep the model's state between
// their steps (internal/paceshare keeps it on local disk).
type Shared interface {
	// Update calls f under a lock that excludes every Pacer sharing the
	// state, with the state last saved (nil when none was), and saves
	// what f returns, unless f fails.
	Update(f func(saved []byte) ([]byte, error)) error
	// Member names this process among those sharing the state.
	Member() string
	// Gone tells which of members left without a word (their process
	// ended); Update's lock is held when it is asked.
	Gone(members []string) []string
}

// sharing is a shared Pacer's own part.
type sharing struct {
	store  Shared
	member string
	// turn is held by the waiter of this process that asks: the others
	// wait for it, rather than all reading the state.
	turn  chan struct{}
	peers map[string]counts // the other members with requests let go, as last loaded
	ended error             // why sharing ended; nil while it lasts
}

// counts are one member's requests let go: not yet released, not yet
// answered.
type counts struct {
	InFlight   int
	Unanswered int
}

// Share makes p pace as one with every Pacer sharing store, from its next
// step. Call it before the first Wait.
func (p *Pacer) Share(store Shared) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shared = &sharing{store: store, member: store.Member(), turn: make(chan struct{}, 1)}
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

// pollAfter is how long a waiter waits before asking again: wait, or
// SharedPoll at most while shared. p.mu is held.
func (p *Pacer) pollAfter(wait time.Duration) time.Duration {
	if p.shared != nil && p.shared.ended == nil {
		return min(wait, SharedPoll)
	}
	return wait
}

// step runs op, one of the model's steps: on the shared state, loaded and
// saved around it, while sharing lasts. Should the store fail, or hold a
// state this version cannot read, sharing ends and p goes on alone, with
// its own requests only.
func (p *Pacer) step(now time.Time, op func()) {
	s := p.shared
	if s == nil || s.ended != nil {
		op()
		return
	}
	ran := false
	err := s.store.Update(func(saved []byte) ([]byte, error) {
		if err := p.load(saved, now); err != nil {
			return nil, err
		}
		op()
		ran = true
		return p.save(now)
	})
	if err == nil {
		return
	}
	s.ended, s.peers = fmt.Errorf("pacing alone: %w", err), nil
	p.inFlight, p.gate.inFlight = p.own.InFlight, p.own.Unanswered
	if !ran {
		op()
	}
}

// saved is the shared state: the model's, times in Unix nanoseconds
// (state.go writes and reads it).
type saved struct {
	Saved   int64
	Checked int64             // when members were last checked for liveness
	Members map[string]counts // those with requests let go and not released

	Limit  float64 // the pace, within the ceiling of the member that set it
	Tokens float64 // and its tokens at Saved

	Cut       bool
	Peak      float64
	StartBase float64
	StartEnd  float64 // -1: +Inf, before the first refusal
	LastCut   int64
	Grown     int64
	Polled    int64
	Held      bool
	Accepted  bool
	ProbeGap  int64
	ProbeAt   int64
	PausedTil int64
	Sent      []int64
	Acks      []int64
	First     int64
	Probed    bool
	Window    int
	MostOK    []int

	Answered   bool
	Known      bool
	Rolled     bool
	QuotaLimit int
	Remaining  int
	Reset      int64
}

// load takes the shared state into p's model, unless it is old news:
// then the model starts afresh. Members gone without a word are dropped,
// at most every LivenessEvery.
func (p *Pacer) load(b []byte, now time.Time) error {
	s := p.shared
	s.peers = nil
	if b == nil {
		return p.loadNone(now)
	}
	st, err := decodeState(b)
	if err != nil {
		return err
	}
	delete(st.Members, s.member)
	if len(st.Members) > 0 && now.Sub(unixTime(st.Checked)) >= LivenessEvery {
		for _, gone := range s.store.Gone(slices.Sorted(maps.Keys(st.Members))) {
			delete(st.Members, gone)
		}
		st.Checked = now.UnixNano()
	}
	if len(st.Members) == 0 && now.Sub(unixTime(st.Saved)) > Forget && !unixTime(st.PausedTil).After(now) &&
		!unixTime(st.Reset).After(now) {
		return p.loadNone(now)
	}
	s.peers = st.Members
	p.decode(&st)
	return nil
}

// loadNone: nothing shared, or nothing of use: a fresh model, with p's own
// requests.
func (p *Pacer) loadNone(now time.Time) error {
	p.fresh()
	p.checked = now
	p.inFlight, p.gate.inFlight = p.own.InFlight, p.own.Unanswered
	return nil
}

// decode sets p's model from st.
func (p *Pacer) decode(st *saved) {
	p.inFlight, p.gate.inFlight = p.own.InFlight, p.own.Unanswered
	for _, c := range st.Members {
		p.inFlight += c.InFlight
		p.gate.inFlight += c.Unanswered
	}
	p.pace = limiterAt(min(rate.Limit(st.Limit), p.ceiling), st.Tokens, unixTime(st.Saved))
	p.cut, p.peak, p.startBase, p.startEnd = st.Cut, st.Peak, st.StartBase, st.StartEnd
	if st.StartEnd < 0 {
		p.startEnd = inf
	}
	p.lastCut, p.grown, p.polled, p.held = unixTime(st.LastCut), time.Duration(st.Grown), unixTime(st.Polled), st.Held
	p.accepted, p.probeGap, p.probeAt = st.Accepted, time.Duration(st.ProbeGap), unixTime(st.ProbeAt)
	p.pausedTil, p.sent, p.acks, p.first = unixTime(st.PausedTil), unixTimes(st.Sent), unixTimes(st.Acks), unixTime(st.First)
	p.probed, p.window, p.mostOK = st.Probed, st.Window, st.MostOK
	p.gate.answered, p.gate.known, p.gate.rolled = st.Answered, st.Known, st.Rolled
	p.gate.quota = Quota{Limit: st.QuotaLimit, Remaining: st.Remaining, Reset: unixTime(st.Reset)}
	p.checked = unixTime(st.Checked)
}

// save encodes p's model, with p's own requests among the members'.
func (p *Pacer) save(now time.Time) ([]byte, error) {
	startEnd := p.startEnd
	if startEnd == inf {
		startEnd = -1
	}
	st := saved{
		Saved: now.UnixNano(), Checked: p.checked.UnixNano(), Members: p.members(),
		Limit: float64(p.pace.Limit()), Tokens: p.pace.TokensAt(now),
		Cut: p.cut, Peak: p.peak, StartBase: p.startBase, StartEnd: startEnd, LastCut: unixNano(p.lastCut),
		Grown: int64(p.grown), Polled: unixNano(p.polled), Held: p.held, Accepted: p.accepted,
		ProbeGap: int64(p.probeGap), ProbeAt: unixNano(p.probeAt), PausedTil: unixNano(p.pausedTil),
		Sent: unixNanos(p.sent), Acks: unixNanos(p.acks), First: unixNano(p.first), Probed: p.probed,
		Window: p.window, MostOK: p.mostOK,
		Answered: p.gate.answered, Known: p.gate.known, Rolled: p.gate.rolled,
		QuotaLimit: p.gate.quota.Limit, Remaining: p.gate.quota.Remaining, Reset: unixNano(p.gate.quota.Reset),
	}
	return encodeState(&st), nil
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

// limiterAt is a limiter of the pace l (burst 1) holding tokens at at:
// a full one that spent its token when it would have held none, rounded
// to the nanosecond before, so that a wait the limiter told is never
// lengthened by the round trip through the state.
func limiterAt(l rate.Limit, tokens float64, at time.Time) *rate.Limiter {
	lim := rate.NewLimiter(l, 1)
	if tokens < 1 && l > 0 && l != rate.Inf {
		lim.AllowN(at.Add(-time.Duration(math.Ceil(tokens/float64(l)*float64(time.Second)))), 1)
	}
	return lim
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func unixTimes(ns []int64) []time.Time {
	ts := make([]time.Time, len(ns))
	for i, n := range ns {
		ts[i] = time.Unix(0, n)
	}
	return ts
}

func unixNanos(ts []time.Time) []int64 {
	ns := make([]int64, len(ts))
	for i, t := range ts {
		ns[i] = t.UnixNano()
	}
	return ns
}
