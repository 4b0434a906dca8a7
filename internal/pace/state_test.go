package pace

import (
	"encoding/hex"
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// filled is a state whose every field of the model holds a value of its
// own (every bool true), so that a field the encoding forgets, or two it
// swaps, cannot round-trip.
func filled() state {
	st := state{members: map[string]counts{"ab12": {3, 2}, "cd34": {1, 0}}}
	n := int64(0)
	fill(reflect.ValueOf(&st.model).Elem(), &n)
	// What sane() asks of a state the model can take up.
	st.model.limiter.tokens, st.model.startEnd, st.model.gate.share, st.model.gate.prior = 0.25, inf, 0.75, 0.625
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
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	case v.CanInt():
		v.SetInt(*n)
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
	// But for what sane() asks: a pace, a start's base and a rate refused.
	zero.model.limiter.limit, zero.model.startBase, zero.model.peak, zero.members = 1, 1, 1, map[string]counts{}
	zero.model.sent, zero.model.acks = []time.Time{}, []time.Time{} // lists decode empty, not nil
	if got, err := decodeState(encodeState(&zero)); err != nil || !reflect.DeepEqual(got, zero) {
		t.Fatalf("a state of zero values did not round-trip: %+v (%v)", got, err)
	}
}

// golden is the encoding of filled() in each StateFormat: an encoding that
// changes must change the format, so that provider versions side by side
// never read each other's states.
var golden = map[string]string{
	"5": "42505041434535f2abafcdd29df1fa310408616231320604086364333402000000000000803540000000000000d03f8ad097d1d29df1fa3100000000008039400000000000803a40000000000000f0bf010101010101010101a8fdf9d5d29df1fa31b48feed7d29df1fa31ccb3d6dbd29df1fa31d2bcd0dcd29df1fa31888e9be5d29df1fa31aabff6c1d29df1fa31da87c7c9d29df1fa313a4220225c0a0c1416000000000000e83f000000000000e43f06decec4ded29df1fa3186897a86897a06f6f2ace2d29df1fa3186897a86897a06606264",
}

func TestState_goldenEncoding(t *testing.T) {
	st := filled()
	got := hex.EncodeToString(encodeState(&st))
	want, ok := golden[StateFormat]
	if !ok || got != want {
		t.Fatalf("the encoding of format %q is not its golden one: if the encoding changed, change StateFormat and add its golden:\n%q: %q,", StateFormat, StateFormat, got)
	}
}
