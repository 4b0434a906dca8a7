package pace

import (
	"math"
	"time"
)

// The model of limits nobody announces, its phases, and its one
// transition: next takes the model, an event and the time to the model
// after it, touching nothing else and reading no clock; what it asks of the
// pace's tokens, and the events it tells, it returns (effect), which the
// Pacer's tell gives them. Only methods of model assign the model's fields, but for the
// decoder, which builds a state whole (TestModel_onlyTheTransitionAssignsIt).
// The gate, its own type, reads its answers in gate.done.

// model is the state of the package doc's model, a plain value: what
// Pacers that share it save and load whole around each step (share.go,
// state.go). Configuration, the counts derived from the members and the
// pace's tokens are not in it. Each field keeps the invariant its comment
// states; none can be told from the others.
type model struct {
	gate    gate
	checked time.Time // when members were last checked for liveness (share.go)
	// cut numbers the pace's curves: raised by every cut, and when a limit
	// in flight is learnt (the pace starts afresh). A Ticket carries the
	// number it went under, and only an answer to a request sent under
	// the current one says anything of the pace: a number, not a time,
	// so that no clock orders a request against a cut, and a fresh start
	// is a boundary too.
	cut uint32
	// phase is where the model is: starting, following or probing, each
	// holding what only it needs. Never nil.
	phase         phase
	grown         time.Duration // how long requests waited for the pace since the curve began, or since its doubling ended
	polled        time.Time     // when a request last asked to go
	held          bool          // and the pace, not the ceiling, held it back, or let it go before its token
	pausedTil     time.Time     // a Retry-After past RoundingPause holds every request till then
	sent          []time.Time   // when requests went, over the last RateSpan
	accepts       []time.Time   // when requests were accepted, over the last second
	first         time.Time     // when the first request went
	inFlightLimit int           // the most requests in flight the service accepts, once learnt; 0 before
	// othersAccepted holds the others in flight with each of the last
	// InFlightHistory requests accepted.
	othersAccepted []int
	// refusedInARow counts the refusals answered since the last
	// acceptance, but for the announced quota's.
	refusedInARow int
	// mostAccepted is the most requests the service accepted over the
	// second before a refusal, but for the announced quota's.
	mostAccepted int
}

// phase is one of the package doc's phases: starting, following or
// probing, values that are replaced whole.
type phase interface{ phaseName() string }

// starting: no rate refused since the first request or a fresh start;
// the pace doubles every StartDoubling of grown from StartRate, with no
// end. heard is nothingAccepted or accepted.
type starting struct{ heard heard }

// following: a rate refused, the pace on its curve back to it, and what
// answers to requests sent under the current curve said.
type following struct {
	curve
	heard heard
}

// probing: the service refused everything sent since the cut; one request
// goes at a time, gap apart, till one is accepted. The curve waits as it
// was (requests wait for the probe, not the pace).
type probing struct {
	curve
	gap time.Duration // before the next probe: above 0
	at  time.Time     // when the next probe may go: not zero
}

func (starting) phaseName() string  { return "starting" }
func (following) phaseName() string { return "following" }
func (probing) phaseName() string   { return "probing" }

// curve is the pace after a cut: doubling every StartDoubling of grown
// from FirstBackoff of refused up to cutTo, then along the cubic from
// cutTo back to refused after Recover.
type curve struct {
	// refused is the rate the last cut took the limit for: the rate
	// refused or, after a shut-out, mostAccepted if less. Finite, above 0.
	refused float64
	cutTo   float64 // the rate the last cut set, where the cubic begins: above 0, at most Backoff of refused
	// doubling: grown counts from the cut and the doubling has not yet
	// reached cutTo.
	doubling bool
}

// heard is what answers to requests sent under the current curve said.
type heard uint8

const (
	// nothingAccepted: a refusal of one says the service refuses
	// everything, and probing begins.
	nothingAccepted heard = iota
	_                     // probing's value on the wire (state.go)
	accepted              // one was accepted
	// reopened: one was accepted after probing, so the next cut measures
	// the rate the service accepted, not the rate requests went at.
	reopened
)

// curve is the phase's curve, once cut.
func (m *model) curve() (curve, bool) {
	switch ph := m.phase.(type) {
	case following:
		return ph.curve, true
	case probing:
		return ph.curve, true
	}
	return curve{}, false
}

// setCurve gives the phase curve c: probing goes on under it, and a start
// follows it, what was heard kept.
func (m *model) setCurve(c curve) {
	switch ph := m.phase.(type) {
	case following:
		ph.curve = c
		m.phase = ph
	case probing:
		ph.curve = c
		m.phase = ph
	case starting:
		m.phase = following{c, ph.heard}
	}
}

// doubling tells whether the pace doubles: always while starting.
func (m *model) doubling() bool {
	c, cut := m.curve()
	return !cut || c.doubling
}

// settle ends a doubling that has reached Backoff of the rate refused:
// the cubic's time begins there.
func (m *model) settle() {
	if c, cut := m.curve(); cut && c.doubling && m.rate() >= c.cutTo {
		c.doubling, m.grown = false, 0
		m.setCurve(c)
	}
}

// rate is the pace the model gives: doubling from StartRate while
// starting, and on the curve once cut.
func (m *model) rate() float64 {
	doubled := math.Exp2(float64(m.grown) / float64(StartDoubling))
	switch c, cut := m.curve(); {
	case !cut:
		return StartRate * doubled
	case c.doubling:
		return FirstBackoff * c.refused * doubled
	default:
		x := float64(m.grown)/float64(Recover) - 1
		return c.refused + (c.refused-c.cutTo)*x*x*x
	}
}

// modelEvent is what changes the model: asked, heldForPace, went, answered
// and wentAlone (an Event is what the log is told of a change).
type modelEvent interface{ isModelEvent() }

// asked: a request asks to go.
type asked struct{}

// heldForPace: the request that asked waits for the pace's token; byModel,
// the model's pace holds it back, not the user's ceiling.
type heldForPace struct{ byModel bool }

// went: the request that asked goes at at (later than the ask when let go
// before its token, while shared); byModel as for heldForPace.
type went struct {
	at      time.Time
	byModel bool
}

// wentAlone: a process whose requests go on its copy of a shared state
// takes its share of the fleet's pace: share a second, over members.
type wentAlone struct {
	share   float64
	members int
}

func (asked) isModelEvent()       {}
func (heldForPace) isModelEvent() {}
func (went) isModelEvent()        {}
func (answered) isModelEvent()    {}
func (wentAlone) isModelEvent()   {}

// next is the model's one transition.
func (m *model) next(e modelEvent, now time.Time, s setting) effect {
	var out effect
	switch e := e.(type) {
	case asked:
		if m.held && m.polled.Before(now) {
			// A request waited for the pace since: it is what holds
			// them back, and the pace grows.
			m.grown += now.Sub(m.polled)
			m.repace(s, &out)
		}
		m.polled, m.held = now, false
	case heldForPace:
		m.held = e.byModel
	case went:
		m.held = e.at.After(now) && e.byModel
		if m.first.IsZero() {
			m.first = e.at
		}
		m.sent = append(trimBefore(m.sent, now.Add(-RateSpan)), e.at)
	case answered:
		m.hear(e, now, s, &out)
	case wentAlone:
		m.setCurve(curve{refused: e.share, cutTo: Backoff * e.share})
		m.grown = Recover
		if m.inFlightLimit > 0 {
			m.inFlightLimit = (m.inFlightLimit + e.members - 1) / e.members
		}
	}
	return out
}
