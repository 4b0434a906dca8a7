package pace

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// The shared state's encoding: a magic, the version, then saved's fields
// in order, as varints, float64 bits and bytes; a list as its length and
// its items, times after the first as the gap from the one before. Binary
// rather than JSON: every step of every process reads it whole, and it is
// read by nothing else.
const stateMagic = "BPPACE"

// errVersion is a state saved by another version of the provider.
var errVersion = errors.New("the shared state is another version's")

// errUnreadable is a state that is not one.
var errUnreadable = errors.New("the shared state is unreadable")

func encodeState(st *saved) []byte {
	var e encoder
	e.b = append(e.b, stateMagic...)
	e.int(stateVersion)
	e.int(st.Saved)
	e.int(st.Checked)
	e.int(int64(len(st.Members)))
	for _, name := range slices.Sorted(maps.Keys(st.Members)) {
		e.int(int64(len(name)))
		e.b = append(e.b, name...)
		e.int(int64(st.Members[name].InFlight))
		e.int(int64(st.Members[name].Unanswered))
	}
	e.float(st.Limit, st.Tokens, st.Peak, st.StartBase, st.StartEnd)
	e.bool(st.Cut, st.Held, st.Accepted, st.Probed, st.Answered, st.Known, st.Rolled)
	e.int(st.LastCut, st.Grown, st.Polled, st.ProbeGap, st.ProbeAt, st.PausedTil, st.First, st.Reset)
	e.int(int64(st.Window), int64(st.QuotaLimit), int64(st.Remaining))
	e.times(st.Sent)
	e.times(st.Acks)
	e.int(int64(len(st.MostOK)))
	for _, n := range st.MostOK {
		e.int(int64(n))
	}
	return e.b
}

func decodeState(b []byte) (saved, error) {
	var st saved
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return st, errUnreadable
	}
	d := decoder{b: b[len(stateMagic):]}
	if v := d.int(); d.err == nil && v != stateVersion {
		return st, fmt.Errorf("%w (version %d, not %d)", errVersion, v, stateVersion)
	}
	st.Saved, st.Checked = d.int(), d.int()
	st.Members = map[string]counts{}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		name := string(d.bytes(d.count()))
		st.Members[name] = counts{InFlight: int(d.int()), Unanswered: int(d.int())}
	}
	st.Limit, st.Tokens, st.Peak, st.StartBase, st.StartEnd = d.float(), d.float(), d.float(), d.float(), d.float()
	st.Cut, st.Held, st.Accepted, st.Probed, st.Answered, st.Known, st.Rolled = d.bool(), d.bool(), d.bool(), d.bool(), d.bool(), d.bool(), d.bool()
	st.LastCut, st.Grown, st.Polled, st.ProbeGap = d.int(), d.int(), d.int(), d.int()
	st.ProbeAt, st.PausedTil, st.First, st.Reset = d.int(), d.int(), d.int(), d.int()
	st.Window, st.QuotaLimit, st.Remaining = int(d.int()), int(d.int()), int(d.int())
	st.Sent, st.Acks = d.times(), d.times()
	for n := d.count(); n > 0 && d.err == nil; n-- {
		st.MostOK = append(st.MostOK, int(d.int()))
	}
	if d.err == nil && (len(d.b) > 0 || !sane(&st)) {
		d.err = errUnreadable
	}
	return st, d.err
}

type encoder struct{ b []byte }

func (e *encoder) int(vs ...int64) {
	for _, v := range vs {
		e.b = binary.AppendVarint(e.b, v)
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

func (e *encoder) times(ts []int64) {
	e.int(int64(len(ts)))
	prev := int64(0)
	for _, t := range ts {
		e.int(t - prev)
		prev = t
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

func (d *decoder) times() []int64 {
	n := d.count()
	ts := make([]int64, 0, n)
	prev := int64(0)
	for range n {
		prev += d.int()
		ts = append(ts, prev)
	}
	return ts
}

// sane tells a state the model can take up: a pace, and counts that are
// not negative.
func sane(st *saved) bool {
	for _, c := range st.Members {
		if c.InFlight < 0 || c.Unanswered < 0 {
			return false
		}
	}
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	return st.Limit > 0 && finite(st.Limit) && finite(st.Tokens) && st.Tokens <= 1 && finite(st.Peak) && finite(st.StartBase) &&
		finite(st.StartEnd) && st.Grown >= 0 && st.ProbeGap >= 0
}
