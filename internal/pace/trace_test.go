package pace

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tracer is a Pacer that tells, for TestTrace, each change of its model
// when it happens and what went each tenth of a second.
type tracer struct {
	*Pacer
	clock Clock
	start time.Time
	log   *strings.Builder
	bins  map[int]*[3]int // sent, accepted, refused, by tenth of a second
}

func (tr *tracer) bin(now time.Time) *[3]int {
	k := int(now.Sub(tr.start) / (100 * time.Millisecond))
	if tr.bins[k] == nil {
		tr.bins[k] = &[3]int{}
	}
	return tr.bins[k]
}

func (tr *tracer) events() {
	for _, e := range tr.Events() {
		fmt.Fprintf(tr.log, "%7.3f s  %s %v\n", tr.clock.Now().Sub(tr.start).Seconds(), e.Message, e.Fields)
	}
}

func (tr *tracer) askOK(ctx context.Context, now time.Time) (Ticket, time.Duration, bool) {
	if tr.start.IsZero() {
		tr.start = now
	}
	t, wait, ok := tr.Pacer.askOK(ctx, now)
	if ok {
		tr.bin(now)[0]++
	}
	tr.events()
	return t, wait, ok
}

func (tr *tracer) Done(t Ticket, a Answer) {
	if b := tr.bin(tr.clock.Now()); a.Refused {
		b[2]++
	} else {
		b[1]++
	}
	tr.Pacer.Done(t, a)
	tr.events()
}

// TestTrace retells one simulated plan: PACE_TRACE names an unannounced
// row, PACE_TRACE_SEED its plan (0 when unset) and PACE_TRACE_NETWORK
// "loopback" or "80 ms" (loopback when unset). It prints the model's
// events, each at its time since the plan began, then what went each tenth
// of a second: where a row's time goes, read rather than guessed.
func TestTrace(t *testing.T) {
	row := os.Getenv("PACE_TRACE")
	if row == "" {
		t.Skip("PACE_TRACE=<row> retells one simulated plan behind that row")
	}
	seed, _ := strconv.ParseUint(os.Getenv("PACE_TRACE_SEED"), 10, 64)
	net := networks[0]
	for _, n := range networks {
		if n.name == os.Getenv("PACE_TRACE_NETWORK") {
			net = n
		}
	}
	for _, c := range unannounced {
		if c.name != row {
			continue
		}
		var tr *tracer
		var b strings.Builder
		r := simulateOf(seed, simReads, c.new(), c.network(net.net), func(clock Clock) simPacer {
			tr = &tracer{Pacer: defaultPacer(clock), clock: clock, log: &b, bins: map[int]*[3]int{}}
			return tr
		})
		b.WriteString("\n")
		for k := 0; k <= int(r.took/(100*time.Millisecond)); k++ {
			if n := tr.bins[k]; n != nil {
				fmt.Fprintf(&b, "%5.1f s  sent %2d  accepted %2d  refused %2d\n", float64(k)/10, n[0], n[1], n[2])
			}
		}
		t.Logf("\n%s, %s, plan %d: %v, %d requests, %d refused\n%s", c.name, net.name, seed, r.took, r.requests, r.refused, b.String())
		return
	}
	t.Fatalf("no unannounced row is named %q", row)
}
