package pace

import (
	"net/http"
	"os"
	"testing"
	"time"
)

// retryAfter1 is a limiter whose refusals ask for a second, as nginx's
// limit_req does when set to send Retry-After: 1.
type retryAfter1 struct{ limiter }

func (r retryAfter1) admit(at time.Time) (bool, time.Duration, http.Header) {
	ok, _, q := r.limiter.admit(at)
	if ok {
		return true, 0, q
	}
	return false, time.Second, q
}

// TestShare_onePlanAsAlone prints one plan of the list and 300 reads
// sharing its pace through a schedule of its own (runSharedFleet, K = 1),
// beside the same plan pacing alone, behind the real limiters' stand-ins
// of make bench-limiters, on loopback and 80 ms away: the mean of five
// seeds. Sharing, a plan alone should pace as it would not sharing. A
// measurement for the shared pace's tuning, not a test: PACE_ONE_PLAN=1.
func TestShare_onePlanAsAlone(t *testing.T) {
	if os.Getenv("PACE_ONE_PLAN") == "" {
		t.Skip("PACE_ONE_PLAN=1 measures one plan sharing against one alone")
	}
	fleetReads = 300
	defer func() { fleetReads = 40 }()
	cases := []struct {
		name string
		new  func() limiter
	}{
		{"nginx burst 1, RA 1", func() limiter { return retryAfter1{silent{newBucket(50, 1)}} }},
		{"nginx burst 1, silent", func() limiter { return silent{newBucket(50, 1)} }},
		{"nginx burst 10, RA 1", func() limiter { return retryAfter1{silent{newBucket(50, 10)}} }},
		{"nginx burst 10, silent", func() limiter { return silent{newBucket(50, 10)} }},
		{"HAProxy, RA 1", func() limiter { return retryAfter1{silent{&periodRate{n: 50}}} }},
		{"HAProxy, silent", func() limiter { return silent{&periodRate{n: 50}} }},
	}
	for _, n := range networks {
		m := machine{net: n.net}
		for _, c := range cases {
			var sr, ss, ar, as float64
			seeds := 5
			for seed := range uint64(seeds) {
				r, s := runFleet(t, seed, 1, c.new(), m, true)
				sr, ss = sr+r, ss+s
				r, s = runFleet(t, seed, 1, c.new(), m, false)
				ar, as = ar+r, as+s
			}
			f := float64(seeds)
			t.Logf("%-8s %-24s shared %.3fx %5.2f%% | alone %.3fx %5.2f%%", n.name, c.name, sr/f, ss/f, ar/f, as/f)
		}
	}
}
