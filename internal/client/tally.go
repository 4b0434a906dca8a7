package client

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

// Tally is one data source read's account of its requests, for the line
// that ends it (LogRead): what it sent, what the service refused, the
// outages it retried, and where its requests' time went, summed over them
// (requests in flight at once overlap, so the sums may pass the wall time).
// A read that waited on a list another read fetched counts none of that
// read's requests: its wall time is the wait.
type Tally struct {
	start time.Time

	mu            sync.Mutex
	requests      int
	refused       int // the service's rate-limit refusals (429, or a 403 saying so)
	outageRetries int
	pace          time.Duration // waiting for the pace (pace.Waited)
	backoff       time.Duration // waiting between attempts
	wire          time.Duration // from sending to the answer's headers
}

type tallyKey struct{}

// WithTally gives a read's context a Tally of its own.
func WithTally(ctx context.Context) (context.Context, *Tally) {
	t := &Tally{start: time.Now()}
	return context.WithValue(ctx, tallyKey{}, t), t
}

// tallyFrom is the Tally WithTally put in ctx, or nil.
func tallyFrom(ctx context.Context) *Tally {
	t, _ := ctx.Value(tallyKey{}).(*Tally)
	return t
}

// attempt counts one round trip.
func (t *Tally) attempt(waited, backoff, wire time.Duration, refused bool) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests++
	t.pace += waited
	t.backoff += backoff
	t.wire += wire
	if refused {
		t.refused++
	}
}

// outage counts a retry for an outage (502, 503, 504, no answer).
func (t *Tally) outage() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.outageRetries++
	t.mu.Unlock()
}

// Counts are a Tally's figures: requests, refusals and outage retries.
func (t *Tally) Counts() (requests, refused, outageRetries int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.requests, t.refused, t.outageRetries
}

// LogRead ends a data source read with one INFO line: what (the data
// source, and its key), its requests, refusals and outage retries, and its
// time: the whole, and summed over its requests, waiting for the pace,
// backing off, and on the wire. Through the client's masking, as every
// line of the http subsystem.
func (c *Client) LogRead(ctx context.Context, t *Tally, what map[string]any) {
	t.mu.Lock()
	fields := map[string]any{
		"requests": t.requests, "refused": t.refused, "outage_retries": t.outageRetries,
		"wall_ms": time.Since(t.start).Milliseconds(), "pace_wait_ms": t.pace.Milliseconds(),
		"backoff_ms": t.backoff.Milliseconds(), "wire_ms": t.wire.Milliseconds(),
	}
	t.mu.Unlock()
	for k, v := range what {
		fields[k] = v
	}
	tflog.SubsystemInfo(c.logContext(ctx), logSubsystem, "read done", fields)
}

// waitFields are an attempt's waits for its log line: the whole wait for
// the pace, and each part of it of a millisecond or more.
func waitFields(fields map[string]any, w pace.Waited) {
	fields["pace_wait_ms"] = w.Total().Milliseconds()
	for h := pace.HoldPace; h < pace.Hold(len(w)); h++ {
		if ms := w[h].Milliseconds(); ms > 0 {
			fields["wait_"+h.String()+"_ms"] = ms
		}
	}
}
