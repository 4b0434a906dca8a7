package pace

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// The learnt record's encoding: a magic and StateFormat, then the
// record's fields in order, as varints, float64 bits and bytes; a time as
// Unix nanoseconds (0 for none). Binary rather than JSON: it rides on the
// schedule's words (internal/schedule), read by nothing else. A field added
// to the record must be added here, and StateFormat changed:
// TestState_roundTripsEveryField and the golden encoding say so.
const stateMagic = "BPPACE"

// errUnreadable is a record that is not one of this format.
var errUnreadable = errors.New("the shared record is unreadable")

// record is what a shared Pacer saves for the fleet of what its model
// learnt (fleet.go): the phase, how long the pace had grown when it was
// saved, a pause, a limit in flight and the most a second admitted
// before a refusal. Each field keeps its model field's invariant.
type record struct {
	phase         phase
	grown         time.Duration
	pausedTil     time.Time
	inFlightLimit int
	mostAccepted  int
}

func encodeRecord(r *record) []byte {
	var e encoder
	e.b = append(e.b, stateMagic...)
	e.b = append(e.b, StateFormat...)
	w := phaseOnWire(r.phase)
	e.float(w.refused, w.cutTo)
	e.bool(w.doubling)
	e.int(int64(w.heard), int64(w.gap))
	e.time(w.at, r.pausedTil)
	e.int(int64(r.grown), int64(r.inFlightLimit), int64(r.mostAccepted))
	return e.b
}

func decodeRecord(b []byte) (record, error) {
	var r record
	head := stateMagic + StateFormat
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return r, errUnreadable
	}
	d := decoder{b: b[len(head):]}
	var w wirePhase
	w.refused, w.cutTo = d.float(), d.float()
	w.doubling = d.bool()
	w.heard, w.gap = heard(d.int()), time.Duration(d.int())
	w.at, r.pausedTil = d.time(), d.time()
	r.grown, r.inFlightLimit, r.mostAccepted = time.Duration(d.int()), int(d.int()), int(d.int())
	r.phase = w.phase()
	if d.err == nil && (len(d.b) > 0 || brokenRecord(&r) != "") {
		d.err = errUnreadable
	}
	return r, d.err
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

// brokenRecord names the first invariant r does not keep, or is empty:
// those of the model's fields it holds.
func brokenRecord(r *record) string {
	m := model{phase: r.phase, grown: r.grown, pausedTil: r.pausedTil, inFlightLimit: r.inFlightLimit, mostAccepted: r.mostAccepted}
	return broken(&m, tokenState{limit: 1, tokens: 1})
}

// broken names the first invariant m, with the pace's tokens, does not
// keep, or is empty: the one statement of the model's invariants, checked
// on every record read and, in the tests, after every step. Each field's
// doc states its own.
func broken(m *model, pace tokenState) string {
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	counts := true
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
		{counts, "no count of others in flight is negative"},
		// A pace of nothing would let every request go at once.
		{pace.limit > 0 && finite(pace.limit), "the pace is a finite rate above nothing"},
		{finite(pace.tokens) && pace.tokens <= 1, "the pace holds at most one token"},
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
