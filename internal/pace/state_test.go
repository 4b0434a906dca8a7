package pace

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/time/rate"
)

// filled is a record whose every field holds a value of its own, so that
// a field the encoding forgets, or two it swaps, cannot round-trip.
func filled() record {
	var r record
	n := int64(0)
	fill(reflect.ValueOf(&r).Elem(), &n)
	// What brokenRecord asks of a record the model can take up.
	if pr, ok := r.phase.(probing); ok {
		pr.cutTo = pr.refused / 2
		r.phase = pr
	}
	return r
}

var timeType = reflect.TypeFor[time.Time]()

// fill sets v, and every field within it, unexported ones too, to values
// no other field holds.
func fill(v reflect.Value, n *int64) {
	v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	*n++
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Unix(0, 1_800_000_000_000_000_000+*n*1_000_003)))
	case v.Type() == reflect.TypeFor[phase]():
		// The phase that holds the most: probing.
		var pr probing
		fill(reflect.ValueOf(&pr).Elem(), n)
		v.Set(reflect.ValueOf(pr))
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	case v.CanInt():
		v.SetInt(*n)
	case v.CanUint():
		v.SetUint(uint64(*n))
	case v.CanFloat():
		v.SetFloat(float64(*n) + 0.5)
	case v.Kind() == reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 3, 3))
		for i := range 3 {
			fill(v.Index(i), n)
		}
	default:
		panic("fill: no value for a field of kind " + v.Kind().String() + ": teach fill and the encoding")
	}
}

// TestState_roundTripsEveryField: the record is saved and read whole.
func TestState_roundTripsEveryField(t *testing.T) {
	want := filled()
	got, err := decodeRecord(encodeRecord(&want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the record did not round-trip whole: a field is not encoded, or two are swapped\n got %+v\nwant %+v", got, want)
	}
	zero := record{phase: starting{}} // but for what brokenRecord asks: a phase
	if got, err := decodeRecord(encodeRecord(&zero)); err != nil || !reflect.DeepEqual(got, zero) {
		t.Fatalf("a record of zero values did not round-trip: %+v (%v)", got, err)
	}
}

// golden is the encoding of filled() in StateFormat: an encoding that
// changes must change the format, so that provider versions side by side
// never read each other's records.
var golden = map[string]string{
	"12": "425050414345313200000000000016400000000000000640010210b6d1eac3d29df1fa31c2e3dec5d29df1fa3114181a",
}

func TestState_goldenEncoding(t *testing.T) {
	r := filled()
	got := hex.EncodeToString(encodeRecord(&r))
	want, ok := golden[StateFormat]
	if !ok || got != want {
		t.Fatalf("the encoding of format %q is not its golden one: if the encoding changed, change StateFormat and add its golden:\n%q: %q,", StateFormat, StateFormat, got)
	}
}

// TestState_aPaceTooSlowForADuration: a sane state may hold any finite
// pace; one so slow that its token's wait is past a Duration's range
// waits the longest Duration, never a wrapped one, and never goes at once.
func TestState_aPaceTooSlowForADuration(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, limit := range []float64{1e-12, 1e-300} {
		for _, tokens := range []float64{0.5, 0, -3} {
			lim := limiterAt(rate.Limit(limit), tokens, now)
			if got := lim.TokensAt(now); got > 1 || got < -4 {
				t.Errorf("limiterAt(%g, %g): %g tokens now, want the %g given", limit, tokens, got, tokens)
			}
			if wait := (&Pacer{pace: lim}).tokenWait(now); wait < 100*365*24*time.Hour {
				t.Errorf("limiterAt(%g, %g): the next token in %v, want the longest wait", limit, tokens, wait)
			}
		}
	}
}

// FuzzPacer_keepsEveryInvariant drives Pacers with events read from the
// input, two of them taking up each other's records as a fleet's runs do
// (the first begins with record, any bytes: one that cannot be read is
// not taken up) and one alone, and holds every invariant (broken) after
// each event, and in the pace, which is the model's rate alone. An event
// is two bytes: what happens and to which Pacer, and a number for it (a
// time, a request, a Retry-After, a quota's count).
func FuzzPacer_keepsEveryInvariant(f *testing.F) {
	fresh := record{phase: starting{}}
	filledRecord := filled()
	for _, r := range []*record{&fresh, &filledRecord} {
		f.Add(encodeRecord(r), []byte{1, 0, 1, 0, 0, 50, 3, 0, 5, 0, 1, 0, 0, 200, 2, 0, 5, 0, 0, 255, 0, 255, 2, 0, 5, 0, 7, 0, 15, 0})
	}
	f.Add([]byte("BPPACE"), []byte{1, 0, 9, 0, 17, 0, 0, 10, 3, 0, 11, 0, 19, 0, 0, 1, 4, 3, 6, 0, 13, 0, 0, 90, 1, 0, 2, 0, 7, 1})
	f.Fuzz(func(t *testing.T, saved, events []byte) {
		clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
		ps := []*Pacer{defaultPacer(clock), defaultPacer(clock), defaultPacer(clock)}
		if r, err := decodeRecord(saved); err == nil {
			ps[0].tell(adopted{r}, clock.now)
		}
		tickets := make([][]Ticket, len(ps)) // let go and not answered
		answered := make([][]Ticket, len(ps))
		for i := 0; i+1 < len(events); i += 2 {
			what, n := events[i], int(events[i+1])
			k := int(what>>3) % len(ps)
			p := ps[k]
			pick := func(from *[]Ticket) (Ticket, bool) {
				if len(*from) == 0 {
					return Ticket{}, false
				}
				j := n % len(*from)
				tk := (*from)[j]
				*from = slices.Delete(*from, j, j+1)
				return tk, true
			}
			answer := func(a Answer) {
				if tk, ok := pick(&tickets[k]); ok {
					p.Done(tk, a)
					answered[k] = append(answered[k], tk)
				}
			}
			switch what & 7 {
			case 0:
				clock.now = clock.now.Add(time.Duration(n*n) * 50 * time.Microsecond)
			case 1:
				if tk, _, ok := p.askOK(bg, clock.now); ok {
					tickets[k] = append(tickets[k], tk)
				}
			case 2:
				answer(Answer{})
			case 3:
				answer(Answer{Refused: true, RetryAfter: time.Duration(n%8) * time.Duration(n) * 10 * time.Millisecond})
			case 4:
				answer(Answer{Failed: true})
			case 5:
				h := http.Header{}
				h.Set("X-RateLimit-Limit", "100")
				h.Set("X-RateLimit-Remaining", fmt.Sprint(n%101))
				h.Set("X-RateLimit-Reset", fmt.Sprint(clock.now.Add(time.Duration(n)*100*time.Millisecond).Unix()))
				answer(Answer{Refused: n%101 == 0, Quota: h})
			case 6:
				if tk, ok := pick(&answered[k]); ok {
					p.Release(tk)
				}
			case 7:
				// The other of the first two takes up p's record, as its
				// run's next word would bring it, grown by n ms of busy.
				if k < 2 {
					r := p.record()
					b := encodeRecord(&r)
					got, err := decodeRecord(b)
					if err != nil {
						t.Fatalf("after event %d, Pacer %d's record cannot be read: %v", i/2, k, err)
					}
					other := ps[1-k]
					other.tell(adopted{got}, clock.now)
					other.tell(grew{got.grown + time.Duration(n)*time.Millisecond}, clock.now)
				}
			}
			for j, p := range ps {
				if why := broken(&p.model, paceAt(p, clock.now)); why != "" {
					t.Fatalf("after event %d, Pacer %d breaks an invariant: %s\n%+v", i/2, j, why, p.model)
				}
				if want := min(rate.Limit(p.rate()), p.ceiling); p.pace.Limit() != want {
					t.Fatalf("after event %d, Pacer %d paces at %v, not the model's %v", i/2, j, p.pace.Limit(), want)
				}
			}
		}
	})
}

// refusedRate is the rate the model's last cut refused: 0 while starting.
func refusedRate(m *model) float64 {
	c, _ := m.curve()
	return c.refused
}

// heardOf is what the model heard since its curve began: probing's value
// on the wire while probing.
func heardOf(m *model) heard { return phaseOnWire(m.phase).heard }

// paceAt is p's pace as it stands at now.
func paceAt(p *Pacer, now time.Time) tokenState {
	return tokenState{limit: float64(p.pace.Limit()), tokens: p.pace.TokensAt(now), at: now}
}

// TestState_aPhaseOnTheWire: the encoding holds every phase's fields side
// by side, and a state whose fields are no one phase's is unreadable.
func TestState_aPhaseOnTheWire(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		w    wirePhase
		want string // the phase read; "" unreadable
	}{
		{wirePhase{doubling: true}, "starting"},
		{wirePhase{doubling: true, heard: accepted}, "starting"},
		{wirePhase{doubling: true, heard: reopened}, ""},
		{wirePhase{doubling: true, heard: probingOnWire}, ""},
		{wirePhase{}, ""}, // not cut, not doubling: a pace of nothing
		{wirePhase{doubling: true, cutTo: 8}, ""},
		{wirePhase{refused: 10, cutTo: 8, heard: reopened}, "following"},
		{wirePhase{refused: 10, cutTo: 8, heard: reopened + 1}, ""},
		{wirePhase{refused: 10, cutTo: 8, gap: time.Second}, ""},
		{wirePhase{refused: 10, cutTo: 8, at: at}, ""},
		{wirePhase{refused: 10, cutTo: 8, heard: probingOnWire, gap: time.Second, at: at}, "probing"},
		{wirePhase{heard: probingOnWire, gap: time.Second, at: at}, ""},
	} {
		got := ""
		if ph := c.w.phase(); ph != nil {
			got = ph.phaseName()
			if w := phaseOnWire(ph); w != c.w {
				t.Errorf("%+v read as %s, written as %+v", c.w, got, w)
			}
		}
		if got != c.want {
			t.Errorf("%+v read as %q: want %q", c.w, got, c.want)
		}
	}
}
