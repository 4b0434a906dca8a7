package pace

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// A process that goes on its own copy of the shared model (its store away,
// held past BusyFor, or failed) while other members send. The model: the
// copy's pace, tokens and limit in flight are the fleet's, and the others
// go on spending them, or go alone at once beside it (a Redis too slow for
// everyone). A process that kept them whole would send, with each of its
// fellows, the fleet's whole pace: 256 runs cut off from their Redis would
// have the service refuse as if nothing were shared. So it takes its
// share: what the fleet sent, at most the pace, over its members, from
// where the cubic returns to it, with the copy's tokens in the same
// share; and counts its own requests alone. Its model is one member's
// from then on, and is replaced whole by the shared state at the next
// load. The members are those the store last told live (Counted), idle
// ones among them, or, if more, those the copy holds with requests let go:
// a busy store saves no member's, and a fleet that goes alone at once
// would otherwise share among too few.

// Counted is a Shared store that tells how many members it last saw live,
// this process among them: 0 before it could tell.
type Counted interface {
	Live() int
}

// goAlone takes p's share of its copy at now, once until the next load,
// and counts p's own requests alone. A process that knows of no other
// member keeps its copy whole. p.mu is held.
func (p *Pacer) goAlone(now time.Time) {
	s := p.shared
	if s.alone { // its own requests already counted alone
		return
	}
	s.alone = true
	n := 1 + len(s.peers)
	if c, ok := s.store.(Counted); ok {
		n = max(n, c.Live())
	}
	p.countOwn()
	from := min(float64(p.pace.Limit()), p.sentRate(p.pace.Limit()))
	if n == 1 || from <= 0 || math.IsInf(from, 1) {
		return
	}
	share := from / float64(n)
	p.tell(wentAlone{share, n}, now)
	p.pace = limiterAt(rate.Limit(share), p.pace.TokensAt(now)/float64(n), now)
	p.event("pacing alone at this run's share of the shared pace", map[string]any{
		"members": n, "from_per_second": rateField(from), "to_per_second": rateField(share)})
}
