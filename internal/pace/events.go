package pace

import (
	"math"
	"time"
)

// Event is a change of the model, as it happens: the pace cut, probing
// begun or ended, a limit in flight learnt, a pause or a quota's reset
// waited for, the shared store away or back. Read in order, a Pacer's
// events retell what it believed of the service's limit. Message is in
// the provider's words; Fields holds figures (rates a second, durations
// in milliseconds, times) and, under "reason", a store's error.
type Event struct {
	Message string
	Fields  map[string]any
}

// Events returns the events since the last call, oldest first.
func (p *Pacer) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events
	p.events = nil
	return ev
}

// maxEvents bounds the events kept for a caller that does not take them:
// the oldest go first.
const maxEvents = 64

// event records one. p.mu is held.
func (p *Pacer) event(msg string, fields map[string]any) {
	if len(p.events) >= maxEvents {
		p.events = append(p.events[:0], p.events[1:]...)
	}
	p.events = append(p.events, Event{Message: msg, Fields: fields})
}

// rateField is a rate for an event's field: to a hundredth, and a rate
// of no bound as -1 (JSON has no infinity).
func rateField(r float64) float64 {
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return -1
	}
	return math.Round(r*100) / 100
}

// nanos is n nanoseconds as a Duration, saturated: Go leaves a float's
// conversion out of int64's range to the implementation (amd64 gives the
// least int64 for any, so the wait of a pace of nothing, infinite, would
// let a request go at once; arm64 saturates). Infinity and past it is the
// longest wait; nothing or less, and NaN, none.
func nanos(n float64) time.Duration {
	switch {
	case n >= math.MaxInt64:
		return math.MaxInt64
	case n > 0:
		return time.Duration(n)
	}
	return 0
}

// Hold is what held a request back from going.
type Hold int

// What may hold a request: Wait's Waited counts its time under each.
const (
	HoldNone     Hold = iota
	HoldPace          // the pace's next token
	HoldQuota         // an announced quota: its share, or its reset
	HoldPause         // a pause the service asked for
	HoldProbe         // a probe's gap, or its answer
	HoldInFlight      // the requests in flight at their limit
	HoldStore         // the round trip to the shared pace's store
	holds
)

// Waited is how long a request waited to go, by what held it.
type Waited [holds]time.Duration

// Total is the whole wait.
func (w Waited) Total() time.Duration {
	var sum time.Duration
	for _, d := range w {
		sum += d
	}
	return sum
}

// String names a Hold as the log's fields do.
func (h Hold) String() string {
	return [...]string{"none", "pace", "quota", "pause", "probe", "in_flight", "store"}[h]
}
