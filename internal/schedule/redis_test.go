package schedule

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
)

// The script is State's rules: each of many random steps run in a real
// Redis answers as the same step of State run at Redis's now, with the
// answers told now and then aged by up to more than a second.
func TestRedis_isTheModel(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	rdb := redis.NewClient(&redis.Options{Addr: d.Addr, Protocol: 2})
	t.Cleanup(func() { _ = rdb.Close() })
	r := NewRedis(rdb, "test:{s}:schedule", time.Minute)
	ctx := context.Background()
	var model State
	known := int64(0)
	rnd := rand.New(rand.NewPCG(1, 2))
	// age makes the answers told d tenths older, in Redis and the model
	// alike, as if that time had passed since: the same counts, each in
	// the tenth d before its own.
	age := func(d int64) {
		var acc [10]int64
		for t := model.Tenth - 9; t <= model.Tenth; t++ {
			acc[(t-d)%10] = model.Accepted[t%10]
		}
		model.Accepted, model.Tenth = acc, model.Tenth-d
		fields := []any{"tn", model.Tenth}
		for k, n := range acc {
			fields = append(fields, fmt.Sprintf("a%d", k), n)
		}
		if err := rdb.HSet(ctx, "test:{s}:schedule", fields...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		a := Ask{Kind: Read, Known: known, Gap: -1, Busy: -1}
		switch op := rnd.IntN(10); {
		case op < 6:
			a.Kind, a.N = Take, rnd.IntN(4)+1
			a.Gap = time.Duration(rnd.IntN(3000)-1000) * time.Microsecond
		case op < 9:
			a.Kind, a.Known = Learn, model.Version-int64(rnd.IntN(2))
			a.Gap = time.Duration(rnd.IntN(3000)) * time.Microsecond
			a.Busy = time.Duration(rnd.IntN(3)-1) * time.Millisecond
			a.Learnt = []byte{byte(i), 0, 'x'}
			if rnd.IntN(3) == 0 { // a pause, in Redis's clock, as the last word told it
				a.Until = model.LastAt + int64(rnd.IntN(20_000))
			}
		}
		if rnd.IntN(2) == 0 {
			a.Told = Answers{Accepted: int64(rnd.IntN(4) - 1), Refused: int64(rnd.IntN(3)), Tail: int64(rnd.IntN(4) - 1)}
		}
		if rnd.IntN(10) == 0 && model.Tenth > 0 {
			age(int64(rnd.IntN(12) + 1))
		}
		w, err := r.Step(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if m := model.Step(w.Now, a); !sameWord(w, m) {
			t.Fatalf("step %d: Redis said %+v, the model %+v", i, w, m)
		}
		if rnd.IntN(3) == 0 {
			known = w.Version
		}
	}
	if ttl := rdb.PTTL(ctx, "test:{s}:schedule").Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("the schedule's key expires in %s, want at most a minute", ttl)
	}
}

func sameWord(a, b Word) bool {
	learnt := bytes.Equal(a.Learnt, b.Learnt) && (a.Learnt == nil) == (b.Learnt == nil)
	a.Learnt, b.Learnt = nil, nil
	return learnt && reflect.DeepEqual(a, b)
}
