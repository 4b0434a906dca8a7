package schedule

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
)

// The script is State's rules: each of many random steps run in a real
// Redis answers as the same step of State run at Redis's now.
func TestRedis_isTheModel(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	rdb := redis.NewClient(&redis.Options{Addr: d.Addr, Protocol: 2})
	t.Cleanup(func() { _ = rdb.Close() })
	r := NewRedis(rdb, "test:{s}:schedule", time.Minute)
	ctx := context.Background()
	var model State
	known := int64(0)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var w Word
		var err error
		var want func(now int64) Word
		switch op := rnd.IntN(10); {
		case op < 6:
			n := rnd.IntN(4) + 1
			gap := time.Duration(rnd.IntN(3000)-1000) * time.Microsecond
			w, err = r.Take(ctx, known, n, gap)
			want = func(now int64) Word { return model.take(now, known, n, gap) }
		case op < 9:
			v := model.Version - int64(rnd.IntN(2))
			gap := time.Duration(rnd.IntN(3000)) * time.Microsecond
			busy := time.Duration(rnd.IntN(3)-1) * time.Millisecond
			learnt := []byte{byte(i), 0, 'x'}
			w, err = r.Learn(ctx, v, gap, busy, learnt)
			want = func(now int64) Word { return model.learn(now, v, gap, busy, learnt) }
		default:
			w, err = r.Read(ctx, known)
			want = func(now int64) Word { return model.read(now, known) }
		}
		if err != nil {
			t.Fatal(err)
		}
		if m := want(w.Now); !sameWord(w, m) {
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
	return a.Now == b.Now && a.Version == b.Version && bytes.Equal(a.Learnt, b.Learnt) && (a.Learnt == nil) == (b.Learnt == nil) &&
		a.Gap == b.Gap && a.AnchorAt == b.AnchorAt && a.AnchorIdx == b.AnchorIdx && a.Busy == b.Busy && a.First == b.First
}
