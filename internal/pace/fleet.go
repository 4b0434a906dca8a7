package pace

import (
	"bytes"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/schedule"
)

// The parameters of sharing (package doc).
const (
	// Fresh is how long a word from the fleet's schedule is taken to be
	// current: a slot due later is read again before its request goes, so
	// that a cut another run saved reaches this one first.
	Fresh = 30 * time.Millisecond
	// StepWait bounds each step's wait on the schedule's store.
	StepWait = 250 * time.Millisecond
	// Recheck is how often a request whose slot is far off reads the
	// schedule again: the pace may have grown, or a probe ended, since.
	Recheck = time.Second
	// Away is how long a store that failed a step is left alone, doubled
	// with each failure in a row up to AwayMost: the run paces alone
	// meanwhile.
	Away     = time.Second
	AwayMost = 30 * time.Second
)

// StateFormat is the format of the record the fleet shares (state.go). A
// store keeps each format's schedule under a name of its own, so that
// provider versions side by side each share among themselves. Change it
// with the encoding: its golden test says when.
const StateFormat = "12"

// fleet is a shared Pacer's own part: its side of the fleet's schedule.
type fleet struct {
	taker *schedule.Taker
	// adopted is the record the model last took from the fleet or saved
	// to it, grown as it was then (base): what the fleet has learnt, as far
	// as this run knows.
	adopted []byte
	base    time.Duration
	version int64 // the version of what was adopted: the schedule's busy counts from it
	away    error // why the store failed the last step; nil while it answers
	// learning: a learn is under way (learn), and the next change waits
	// for it.
	learning bool
}

// forSlot is reserve's wait for a request that goes at a slot of the
// fleet's schedule, and has none yet.
const forSlot = time.Duration(-1)

// Share makes p pace as one with every Pacer that shares store's schedule,
// from its next request (package doc). Call it before the first Wait.
func (p *Pacer) Share(store schedule.Store) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.record()
	f := &fleet{adopted: encodeRecord(&r), base: r.grown}
	f.taker = schedule.NewTaker(store, p.clock, schedule.Config{
		Fresh: Fresh, StepWait: StepWait, Recheck: Recheck, Away: Away, AwayMost: AwayMost,
		News: p.news, Gap: p.fleetGap,
	})
	p.fleet = f
	if p.ceiling != rate.Inf {
		p.capped = rate.NewLimiter(p.ceiling, 1)
	}
}

// sharing tells whether p's requests go at the fleet's slots: shared, and
// the store not away. p.mu is held.
func (p *Pacer) sharing() bool { return p.fleet != nil && p.fleet.away == nil }

// fleetHeard is what the fleet's schedule last told of the service's
// answers to every run: accepted over the last second, refused in a row,
// and the most a second accepted as a refusal was told.
type fleetHeard struct{ accepted, inARow, most int }

// heard is the fleet's answers as last told, for the transition: nil
// alone. p.mu is held.
func (p *Pacer) heard() *fleetHeard {
	if !p.sharing() {
		return nil
	}
	w := p.fleet.taker.Last()
	return &fleetHeard{accepted: int(w.Accepted), inARow: int(w.InARow), most: int(w.Most)}
}

// synced tells whether the model holds the record adopted, grown aside:
// nothing it learnt is still to be saved. p.mu is held.
func (p *Pacer) synced() bool {
	r := p.record()
	r.grown = p.fleet.base
	return bytes.Equal(encodeRecord(&r), p.fleet.adopted)
}

// fleetGap is the gap between the schedule's slots that p's pace sets
// once the schedule was busy for busy since version's learn: the probe's
// gap while probing, and otherwise the rate the record adopted gives grown
// by busy, as every run reads it alike (schedule.Config.Gap). A model with
// a change not yet saved, or of another version, sets its own rate.
func (p *Pacer) fleetGap(version int64, busy time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr, ok := p.phase.(probing); ok {
		return pr.gap
	}
	r := p.rate()
	if version == p.fleet.version && p.synced() {
		r = p.rateGrown(p.fleet.base + busy)
	}
	return nanos(float64(time.Second) / r)
}

// slotGrown is how long p's pace has grown, the schedule's busy as last
// told added to the record's; the record's alone while the last word is
// of another version, whose busy counts from another learn. p.mu is held.
func (p *Pacer) slotGrown() time.Duration {
	w := p.fleet.taker.Last()
	if w.Version != p.fleet.version {
		return p.fleet.base
	}
	return p.fleet.base + time.Duration(w.Busy)*time.Microsecond
}

// news takes up what another run saved (schedule.Config.News): the model
// adopts it, unless it cannot be read (the run keeps its own, and its next
// change replaces it), or the store was away (then when it is back).
func (p *Pacer) news(version int64, learnt []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, err := decodeRecord(learnt)
	if err != nil {
		p.event("what another run saved of the pace is unreadable: this run keeps its own", map[string]any{"reason": err.Error()})
		return
	}
	f := p.fleet
	f.adopted, f.base, f.version = bytes.Clone(learnt), r.grown, version
	if f.away == nil {
		p.tell(adopted{r}, p.clock.Now())
		p.event("the pace takes what another run learnt", map[string]any{
			"phase": r.phase.phaseName(), "pace_per_second": rateField(float64(p.pace.Limit()))})
		p.wake() // a probe or a pause ended may let its waiters go
	}
}

// learned saves what the model learnt since the record adopted, if
// anything, by a learn of its own, in the background: at most one under
// way, and none while the store is away (the run's own share is no news to
// the fleet). p.mu is held.
func (p *Pacer) learned() {
	if p.startLearn() {
		go p.learn()
	}
}

// startLearn tells whether the caller is to learn (learn): the model has
// something to save, and no learn is under way. p.mu is held.
func (p *Pacer) startLearn() bool {
	f := p.fleet
	if f == nil || f.away != nil || f.learning || p.synced() {
		return false
	}
	f.learning = true
	return true
}

// learn saves the model's record, with the gap it sets and its pause
// (or next probe), until nothing is left to save. A learn another run's
// beat is dropped: its news, adopted, is what the fleet learnt. p.mu is
// not held.
func (p *Pacer) learn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.fleet
	for f.away == nil && !p.synced() {
		r := p.record()
		b := encodeRecord(&r)
		gap := nanos(float64(time.Second) / p.rate())
		until := p.pausedTil
		if pr, ok := p.phase.(probing); ok {
			gap, until = pr.gap, maxTime(until, pr.at)
		}
		p.mu.Unlock()
		saved, err := f.taker.Learn(gap, 0, until, b)
		p.mu.Lock()
		switch {
		case err != nil:
			p.goAway(err, p.clock.Now())
		case saved:
			f.adopted, f.base, f.version = b, r.grown, f.taker.Version()
		}
	}
	f.learning = false
}

// goAway: the store failed a step, for err. The first failure in a row
// takes the run's share of the fleet's pace: the rate it sent at, which
// the slots it took made its share, from where the cubic returns to it.
// p.mu is held.
func (p *Pacer) goAway(err error, now time.Time) {
	f := p.fleet
	was := f.away
	f.away = err
	if was != nil {
		return
	}
	p.event("the shared pace's store is away: pacing alone until it answers", map[string]any{"reason": err.Error()})
	share := min(float64(p.pace.Limit()), p.sentRate(p.pace.Limit()))
	if share <= 0 || math.IsInf(share, 1) {
		return
	}
	from := float64(p.pace.Limit())
	p.tell(wentAlone{share}, now)
	p.pace = limiterAt(p.pace.Limit(), 0, now)
	p.event("pacing alone at the rate this run sent at: its share of the fleet's", map[string]any{
		"from_per_second": rateField(from), "to_per_second": rateField(float64(p.pace.Limit()))})
}

// back: a step passed after the store was away. The run takes up the
// record it last knew of the fleet's; news since, if any, came with the
// step. p.mu is held.
func (p *Pacer) back(now time.Time) {
	f := p.fleet
	if f.away == nil {
		return
	}
	f.away = nil
	p.event("the shared pace's store answers again: pacing with the other runs", nil)
	if r, err := decodeRecord(f.adopted); err == nil {
		p.tell(adopted{r}, now)
	}
}

// ceilingWait is how long a shared Pacer's request, at its slot, waits
// for the user's ceiling, which is each run's own. p.mu is held.
func (p *Pacer) ceilingWait(now time.Time) time.Duration {
	if p.capped == nil {
		return 0
	}
	return nanos(math.Ceil((1 - p.capped.TokensAt(now)) / float64(p.ceiling) * float64(time.Second)))
}
