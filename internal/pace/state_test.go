package pace

import (
	"bytes"
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

// filled is a state whose every field of the model holds a value of its
// own (every bool true), so that a field the encoding forgets, or two it
// swaps, cannot round-trip.
func filled() state {
	st := state{members: map[string]counts{"ab12": {3, 2, time.Unix(1_800_000_000, 5)}, "cd34": {1, 0, time.Time{}}}}
	n := int64(0)
	fill(reflect.ValueOf(&st.pace).Elem(), &n)
	fill(reflect.ValueOf(&st.model).Elem(), &n)
	// What sane() asks of a state the model can take up.
	st.pace.tokens, st.model.gate.share, st.model.gate.prior = 0.25, 0.75, 0.625
	st.model.gate.notFixed, st.model.gate.notOpened = false, false
	if pr, ok := st.model.phase.(probing); ok {
		pr.cutTo = pr.refused / 2
		st.model.phase = pr
	}
	return st
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

// TestState_roundTripsEveryField: the model is saved and loaded whole.
func TestState_roundTripsEveryField(t *testing.T) {
	want := filled()
	got, err := decodeState(encodeState(&want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the state did not round-trip whole: a field of the model is not encoded, or two are swapped\n got %+v\nwant %+v", got, want)
	}
	var zero state
	// But for what sane() asks: a pace, and a phase.
	zero.pace.limit, zero.model.phase, zero.members = 1, starting{}, map[string]counts{}
	zero.model.sent, zero.model.accepts = []time.Time{}, []time.Time{} // lists decode empty, not nil
	if got, err := decodeState(encodeState(&zero)); err != nil || !reflect.DeepEqual(got, zero) {
		t.Fatalf("a state of zero values did not round-trip: %+v (%v)", got, err)
	}
}

// golden is the encoding of filled() in each StateFormat: an encoding that
// changes must change the format, so that provider versions side by side
// never read each other's states.
var golden = map[string]string{
	"8":  "425050414345388ad097d1d29df1fa310408616231320604086364333402000000000000000440000000000000d03f98a488bfd29df1fa3100000000008039400000000000802940010101010101010690d991d2d29df1fa31ae86f4d6d29df1fa31c6aadcdad29df1fa31ccb3d6dbd29df1fa318285a1e4d29df1fa31c2e3dec5d29df1fa31f2abafcdd29df1fa313840282a58626412141c1e000000000000e83f000000000000e43f06d8c5caddd29df1fa3186897a86897a06f0e9b2e1d29df1fa3186897a86897a065c5e60",
	"10": "42505041434531308ad097d1d29df1fa3104086162313206048a80a0bbd29df1fa3108636433340200000000000000000440000000000000d03f98a488bfd29df1fa310000000000803c400000000000802c40010101010101010230ccb3d6dbd29df1fa31c0a1e2d9d29df1fa31d8c5caddd29df1fa318e9795e6d29df1fa31c2e3dec5d29df1fa31f2abafcdd29df1fa31423e282a5c666812141c1e000000000000e83f000000000000e43f06e4d7bedfd29df1fa3186897a86897a06fcfba6e3d29df1fa3186897a86897a06606264",
	"11": "4250504143453131ae86f4d6d29df1fa3104086162313206048a80a0bbd29df1fa3108636433340200000000000000000440000000000000d03f98a488bfd29df1fa310000000000404140000000000040314001010101010101023cf0e9b2e1d29df1fa31e4d7bedfd29df1fa31fcfba6e3d29df1fa31b2cdf1ebd29df1fa31c2e3dec5d29df1fa31f2abafcdd29df1fa314e4a2a2c68727412141c1e000000000000e83f000000000000e43f00000196e28bd3d29df1fa312e3006888e9be5d29df1fa3186897a86897a06a0b283e9d29df1fa3186897a86897a066c6e70",
	"9":  "425050414345398ad097d1d29df1fa3104086162313206048a80a0bbd29df1fa3108636433340200000000000000000440000000000000d03f98a488bfd29df1fa3100000000008039400000000000802940010101010101010690d991d2d29df1fa31ae86f4d6d29df1fa31c6aadcdad29df1fa31ccb3d6dbd29df1fa318285a1e4d29df1fa31c2e3dec5d29df1fa31f2abafcdd29df1fa313840282a58626412141c1e000000000000e83f000000000000e43f06d8c5caddd29df1fa3186897a86897a06f0e9b2e1d29df1fa3186897a86897a065c5e60",
}

func TestState_goldenEncoding(t *testing.T) {
	st := filled()
	got := hex.EncodeToString(encodeState(&st))
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
// input, two of them sharing a store that begins with state (any bytes: a
// state that cannot be read starts afresh) and one alone, and holds every
// invariant (broken) after each event: in memory, in the state saved, and
// in the pace, which is the model's rate alone. An event is two bytes: what
// happens and to which Pacer, and a number for it (a time, a request, a
// Retry-After, a quota's count).
func FuzzPacer_keepsEveryInvariant(f *testing.F) {
	fresh := state{members: map[string]counts{}, pace: tokenState{limit: StartRate}, model: model{phase: starting{}}}
	filledState := filled()
	for _, st := range []*state{&fresh, &filledState} {
		f.Add(encodeState(st), []byte{1, 0, 1, 0, 0, 50, 3, 0, 5, 0, 1, 0, 0, 200, 2, 0, 5, 0, 0, 255, 0, 255, 2, 0, 5, 0})
	}
	f.Add([]byte("BPPACE"), []byte{1, 0, 9, 0, 17, 0, 0, 10, 3, 0, 11, 0, 19, 0, 0, 1, 4, 3, 6, 0, 13, 0, 0, 90, 1, 0, 2, 0})
	f.Fuzz(func(t *testing.T, saved, events []byte) {
		clock, store, ps := sharedPacers("a", "b")
		store.data = saved
		ps = append(ps, defaultPacer(clock))
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
				store.gone[fmt.Sprint(n%3)] = n%2 == 0
			}
			for j, p := range ps {
				st := stateAt(p, clock.now)
				if why := broken(&st); why != "" {
					t.Fatalf("after event %d, Pacer %d breaks an invariant: %s\n%+v", i/2, j, why, st)
				}
				// A shared Pacer paces as the state it loaded was saved.
				if want := min(rate.Limit(p.rate()), p.ceiling); p.shared == nil && p.pace.Limit() != want {
					t.Fatalf("after event %d, Pacer %d paces at %v, not the model's %v", i/2, j, p.pace.Limit(), want)
				}
			}
			// Only what a Pacer saved: the state given may be unreadable.
			if store.data != nil && !bytes.Equal(store.data, saved) {
				if _, err := decodeState(store.data); err != nil {
					t.Fatalf("after event %d, the state saved cannot be read: %v", i/2, err)
				}
			}
		}
	})
}

// stateAt is p's model with its pace as it stands at now, as a step
// would save it but for the members.
// refusedRate is the rate the model's last cut refused: 0 while starting.
func refusedRate(m *model) float64 {
	c, _ := m.curve()
	return c.refused
}

// heardOf is what the model heard since its curve began: probing's value
// on the wire while probing.
func heardOf(m *model) heard { return phaseOnWire(m.phase).heard }

func stateAt(p *Pacer, now time.Time) state {
	return state{pace: tokenState{limit: float64(p.pace.Limit()), tokens: p.pace.TokensAt(now), at: now}, model: p.model}
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
