package pace

import (
	"cmp"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// The shared state's encoding: a magic and StateFormat, then the state's
// fields in order, as varints, float64 bits and bytes; a time as Unix
// nanoseconds (0 for none), a list as its length and its items, times after
// the first as the gap from the one before. Binary rather than JSON: every
// step of every process reads it whole, and it is read by nothing else.
// A field added to the model must be added here, and StateFormat changed:
// TestState_roundTripsEveryField and the golden encoding say so.
const stateMagic = "BPPACE"

// errUnreadable is a state that is not one of this format.
var errUnreadable = errors.New("the shared state is unreadable")

// state is what Pacers that share the model keep in the store: the model
// whole, the members with requests let go, and the pace's tokens at the
// time it was saved.
type state struct {
	members map[string]counts
	pace    tokenState
	model   model
}

func encodeState(st *state) []byte {
	var e encoder
	m := &st.model
	e.b = append(e.b, stateMagic...)
	e.b = append(e.b, StateFormat...)
	e.time(m.checked)
	e.int(int64(len(st.members)))
	for _, name := range slices.Sorted(maps.Keys(st.members)) {
		e.int(int64(len(name)))
		e.b = append(e.b, name...)
		c := st.members[name]
		e.int(int64(c.InFlight), int64(c.Unanswered))
		e.time(c.Waiting)
	}
	e.float(st.pace.limit, st.pace.tokens)
	e.time(st.pace.at)
	w := phaseOnWire(m.phase)
	e.float(w.refused, w.cutTo)
	e.bool(w.doubling, m.held, m.gate.answered, m.gate.known, m.gate.rolled, m.gate.drifts, m.gate.guess)
	e.int(int64(w.heard))
	e.int(int64(m.cut))
	e.time(m.polled, w.at, m.pausedTil, m.first, m.gate.quota.Reset, m.gate.lastGo)
	e.int(int64(m.grown), int64(w.gap), int64(m.gate.early), int64(m.gate.late))
	e.int(int64(m.inFlightLimit), int64(m.refusedInARow), int64(m.mostAccepted), int64(m.gate.quota.Limit), int64(m.gate.quota.Remaining), int64(m.gate.top), int64(m.gate.spent))
	e.float(m.gate.share, m.gate.prior)
	e.bool(m.gate.notFixed, m.gate.notOpened, m.gate.short)
	e.time(m.gate.opener)
	e.int(int64(m.gate.lastsOver), int64(m.gate.lastsAtMost))
	e.times(m.sent)
	e.times(m.accepts)
	e.int(int64(len(m.othersAccepted)))
	for _, n := range m.othersAccepted {
		e.int(int64(n))
	}
	return e.b
}

func decodeState(b []byte) (state, error) {
	var st state
	m := &st.model
	head := stateMagic + StateFormat
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return st, errUnreadable
	}
	d := decoder{b: b[len(head):]}
	m.checked = d.time()
	st.members = map[string]counts{}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		name := string(d.bytes(d.count()))
		st.members[name] = counts{InFlight: int(d.int()), Unanswered: int(d.int()), Waiting: d.time()}
	}
	st.pace.limit, st.pace.tokens, st.pace.at = d.float(), d.float(), d.time()
	var w wirePhase
	w.refused, w.cutTo = d.float(), d.float()
	w.doubling, m.held = d.bool(), d.bool()
	m.gate.answered, m.gate.known, m.gate.rolled, m.gate.drifts, m.gate.guess = d.bool(), d.bool(), d.bool(), d.bool(), d.bool()
	w.heard = heard(d.int())
	m.cut = uint32(d.int())
	m.polled, w.at, m.pausedTil, m.first, m.gate.quota.Reset, m.gate.lastGo = d.time(), d.time(), d.time(), d.time(), d.time(), d.time()
	m.grown, w.gap = time.Duration(d.int()), time.Duration(d.int())
	m.phase = w.phase()
	m.gate.early, m.gate.late = time.Duration(d.int()), time.Duration(d.int())
	m.inFlightLimit, m.refusedInARow, m.mostAccepted = int(d.int()), int(d.int()), int(d.int())
	m.gate.quota.Limit, m.gate.quota.Remaining, m.gate.top, m.gate.spent = int(d.int()), int(d.int()), int(d.int()), int(d.int())
	m.gate.share, m.gate.prior = d.float(), d.float()
	m.gate.notFixed, m.gate.notOpened, m.gate.short = d.bool(), d.bool(), d.bool()
	m.gate.opener = d.time()
	m.gate.lastsOver, m.gate.lastsAtMost = time.Duration(d.int()), time.Duration(d.int())
	m.sent, m.accepts = d.times(), d.times()
	for n := d.count(); n > 0 && d.err == nil; n-- {
		m.othersAccepted = append(m.othersAccepted, int(d.int()))
	}
	if d.err == nil && (len(d.b) > 0 || !sane(&st)) {
		d.err = errUnreadable
	}
	return st, d.err
}

// wirePhase is a phase as the state's encoding holds it: every phase's
// fields side by side, heard probingOnWire while probing, and the fields a
// phase does not hold zero (doubling true while starting).
type wirePhase struct {
	refused, cutTo float64
	doubling       bool
	heard          heard
	gap            time.Duration
	at             time.Time
}

// probingOnWire is heard's value for probing on the wire.
const probingOnWire heard = 1

func phaseOnWire(ph phase) wirePhase {
	switch ph := ph.(type) {
	case following:
		return wirePhase{refused: ph.refused, cutTo: ph.cutTo, doubling: ph.doubling, heard: ph.heard}
	case probing:
		return wirePhase{refused: ph.refused, cutTo: ph.cutTo, doubling: ph.doubling, heard: probingOnWire, gap: ph.gap, at: ph.at}
	case starting:
		return wirePhase{doubling: true, heard: ph.heard}
	}
	return wirePhase{}
}

// phase is the phase w holds, or nil (unreadable) when its fields are no
// phase's: those it does not hold must be zero. What a phase's own fields
// must keep, broken checks.
func (w wirePhase) phase() phase {
	c := curve{w.refused, w.cutTo, w.doubling}
	switch {
	case w.heard == probingOnWire && w.refused != 0:
		return probing{c, w.gap, w.at}
	case w.gap != 0 || !w.at.IsZero() || w.heard > reopened:
	case w.refused != 0:
		return following{c, w.heard}
	case w.cutTo == 0 && w.doubling && (w.heard == nothingAccepted || w.heard == accepted):
		return starting{w.heard}
	}
	return nil
}

type encoder struct{ b []byte }

func (e *encoder) int(vs ...int64) {
	for _, v := range vs {
		e.b = binary.AppendVarint(e.b, v)
	}
}

func (e *encoder) time(ts ...time.Time) {
	for _, t := range ts {
		e.int(unixNano(t))
	}
}

func (e *encoder) float(vs ...float64) {
	for _, v := range vs {
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
	}
}

func (e *encoder) bool(vs ...bool) {
	for _, v := range vs {
		b := byte(0)
		if v {
			b = 1
		}
		e.b = append(e.b, b)
	}
}

func (e *encoder) times(ts []time.Time) {
	e.int(int64(len(ts)))
	prev := int64(0)
	for _, t := range ts {
		e.int(t.UnixNano() - prev)
		prev = t.UnixNano()
	}
}

// decoder reads what encoder wrote; the first fault sticks, and every
// read after it gives zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errUnreadable
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) time() time.Time { return unixTime(d.int()) }

// count is a length: at most what remains, one byte an item.
func (d *decoder) count() int {
	n := d.int()
	if n < 0 || n > int64(len(d.b)) {
		d.err = cmp.Or(d.err, errUnreadable)
		return 0
	}
	return int(n)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n > len(d.b) {
		d.err = cmp.Or(d.err, errUnreadable)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) float() float64 {
	b := d.bytes(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

func (d *decoder) bool() bool {
	b := d.bytes(1)
	return b != nil && b[0] == 1
}

func (d *decoder) times() []time.Time {
	n := d.count()
	ts := make([]time.Time, 0, n)
	prev := int64(0)
	for range n {
		prev += d.int()
		ts = append(ts, time.Unix(0, prev))
	}
	return ts
}

// maxOwed is the most tokens a sane state owes, for requests let go before
// their tokens came: far more than any fleet lets go within SharedPoll,
// and few enough to reserve again.
const maxOwed = 1 << 20

// sane tells a state the model can take up: one that keeps every
// invariant (broken).
func sane(st *state) bool { return broken(st) == "" }

// broken names the first invariant st does not keep, or is empty: the
// one statement of the state's invariants, checked on every load and, in
// the tests, after every step in memory. Each field's doc states its own.
func broken(st *state) string {
	m := &st.model
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	counts := true
	for _, c := range st.members {
		counts = counts && c.InFlight >= 0 && c.Unanswered >= 0
	}
	for _, n := range m.othersAccepted {
		counts = counts && n >= 0
	}
	c, cut := m.curve()
	pr, probes := m.phase.(probing)
	heardOK := true
	switch ph := m.phase.(type) {
	case starting:
		heardOK = ph.heard == nothingAccepted || ph.heard == accepted
	case following:
		heardOK = ph.heard == nothingAccepted || ph.heard == accepted || ph.heard == reopened
	}
	inOrder := func(ts []time.Time) bool { return slices.IsSortedFunc(ts, time.Time.Compare) }
	for _, c := range []struct {
		ok   bool
		what string
	}{
		{counts, "no member's count, and no count of others in flight, is negative"},
		// A pace of nothing would let every request go at once.
		{st.pace.limit > 0 && finite(st.pace.limit), "the pace is a finite rate above nothing"},
		{finite(st.pace.tokens) && st.pace.tokens <= 1 && st.pace.tokens >= -maxOwed, "the pace holds at most one token, and owes at most maxOwed"},
		{m.phase != nil, "the model is in a phase"},
		{!cut || finite(c.refused) && c.refused > 0, "the rate refused is finite and above nothing"},
		{!cut || c.cutTo > 0 && c.cutTo <= Backoff*c.refused, "the rate cut to is above nothing, at most Backoff of the rate refused"},
		{heardOK, "what was heard is nothing accepted or one accepted, or, following, one accepted after probing"},
		{!probes || pr.gap > 0 && !pr.at.IsZero(), "a probe's gap is above nothing, and its time set"},
		{m.grown >= 0 && m.refusedInARow >= 0 && m.mostAccepted >= 0 && m.inFlightLimit >= 0, "no duration or count of the model is negative"},
		{len(m.othersAccepted) <= InFlightHistory, "at most InFlightHistory accepted are kept"},
		{inOrder(m.sent) && inOrder(m.accepts), "the times requests went and were accepted are in order"},
		{m.gate.share >= 0 && m.gate.share <= 1 && m.gate.prior >= 0 && m.gate.prior <= 1, "the quota's shares are between 0 and 1"},
		{m.gate.early >= 0 && m.gate.early <= sameWindow && m.gate.late >= 0 && m.gate.late <= sameWindow, "how early and late a window ends is within sameWindow"},
		{m.gate.late == 0 || m.gate.early < m.gate.late, "how early a window ends is a bracket"},
		{m.gate.lastsOver == 0 && m.gate.lastsAtMost == 0 || m.gate.lastsOver >= 0 && m.gate.lastsOver < m.gate.lastsAtMost, "how long a window opened by a request lasts is a bracket, or nothing"},
		{!m.gate.notOpened || m.gate.lastsAtMost == 0 && m.gate.opener.IsZero(), "how long an opened window lasts, once contradicted, is not kept"},
	} {
		if !c.ok {
			return c.what
		}
	}
	return ""
}

// limiterAt is a limiter of the pace l (burst 1) holding tokens at at:
// a full one that spent its token when it would have held its fraction
// of one, rounded to the nanosecond before, so that a wait the limiter
// told is never lengthened by the round trip through the state; and that
// then reserved the tokens owed by requests let go before their tokens
// came (the whole tokens under none). The wait converts through nanos: a
// sane state may hold any finite pace, and one too slow for a Duration
// waits the longest one.
func limiterAt(l rate.Limit, tokens float64, at time.Time) *rate.Limiter {
	lim := rate.NewLimiter(l, 1)
	if tokens >= 1 || l <= 0 || l == rate.Inf {
		return lim
	}
	owed := math.Ceil(-min(tokens, 0))
	lim.AllowN(at.Add(-nanos(math.Ceil((tokens+owed)/float64(l)*float64(time.Second)))), 1)
	if owed > 0 {
		lim.SetBurstAt(at, int(owed))
		lim.ReserveN(at, int(owed))
		lim.SetBurstAt(at, 1)
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
