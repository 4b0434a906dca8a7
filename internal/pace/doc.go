// Package pace decides when requests may go, from the rate limits services
// announce and, when they announce nothing, from what they refuse. It knows
// headers, times and answers, not the provider, and takes a Clock.
//
// The gate obeys a quota announced on every answer (X-RateLimit-*,
// RateLimit): no request goes while those that remain, less those in
// flight, would be spent before the reset. The first request goes alone:
// its answer says whether anything is announced.
//
// Pacers that share nothing may share a quota: each sees the same count
// remaining, and would spend it as if alone. So the gate measures its share
// of the quota's spending: its answers in a window against the count's fall
// over them, from the most remaining any of them announced (answers come
// back in any order), weighed with the share it began the window with as
// shareFall answers' worth. A Pacer that spent in the window before counts
// from the window's limit: what others spent since the window began, they
// spent beside it, and one answer tells a Pacer held to a small share that
// they stopped. In its first window, what fell before its first answer may
// be others that still spend or others that ended: the share it begins with
// is a guess, as if they still spend (its one request of that fall), and
// its next request goes at once to test it; if the count fell by that
// request alone, they ended (runs one after another), and the guess is
// dropped. With no limit announced, it measures once the count fell
// shareFall. A share under aloneShare (others spend too: crowded) holds the
// Pacer to that share of what remains, spread evenly until the reset (or
// over maxWait, when the reset is further: it plans no further ahead than
// it would wait, so that runs on a long window far above their needs are
// not spread over its length), so that the Pacers together spend it as one
// client would, whoever they are; alone, or sharing the model, a Pacer
// measures all of it and spends at once. A refusal announcing nothing
// remaining of the gate's window (or of one before it), of the same limit,
// was the quota's: others spent it. The gate holds requests until the
// reset, the count's fall to nothing counts to its share, and the pace
// (below) is not cut, as the refusal says nothing of a rate the service
// does not tell. A refusal with some of the quota remaining (a second
// limit), or of a later window, cuts it, as does one of a request sent
// once the reset was taken to have come: the reset the gate would hold
// requests until is behind it.
//
// A reset given as a whole second rounded up (GitHub's epoch second) is up
// to a second late, and the gate reads where windows end two ways. Fixed:
// windows end the same time before their reset (windows at fixed times).
// Opened: a window begins with the first request after the last one ended
// (GitHub's), and ends the same time after it; the gate's request answered
// with all but one of the limit remaining opened its window. Each answer
// narrows both: one of the gate's window says it ends after the request
// went, one of a later window that it ended by the answer. A request goes
// in the next window once every reading that stands says the window
// ended, so that it is never early whichever holds. An opened reading the
// answers contradict is dropped; a fixed one starts again from nothing
// (the reset as announced), and speaks only where the opened one cannot
// (a window another run opened). A crowded gate spreads its share until the
// middle of where the window may end, so its last requests tell which side
// of it they went, and are never refused: they are its own. Alone, once a
// request waited for a window spent, the window's last endProbes requests
// wait for the same news, spread over where it may end, the first a
// quarter of the way (a run that needs no more than remains never waits
// for them). A reset given as seconds from now drifts from
// answer to answer by its rounding; the least of them is nearest the
// truth, and nothing more is learnt.
//
// Otherwise the service is taken to accept a steady rate it does not tell
// (as the AWS SDKs' adaptive retry mode takes it), and the Pacer keeps one
// pace, a bucket of one in x/time/rate, in one of three phases: starting
// (doubling from StartRate, no rate refused), following a rate refused,
// and probing a service that refuses everything. Two bounds hold in any
// phase: a number in flight, once learnt, and a pause the service asked
// for. Each cut and each fresh start begins a curve, numbered, and each
// Ticket carries the number it went under, so that no clock orders a
// request against a cut:
//
//	             a rate's refusal: cut                  a rate's refusal:
//	starting ------------------------------> following <----+ cut
//	   ^                                      |  |  ^  |     |
//	   |  a refusal of a limit in flight:     |  |  |  +-----+
//	   +--------------------------------------+  |  |
//	        a refusal with none accepted         |  | one sent since the
//	        since the cut                        v  | cut accepted
//	                                           probing <---+ a probe refused:
//	                                             |         | its gap doubles
//	                                             +---------+
//
// The rules, each held by a table of events (rules_test.go):
//   - Starting, the pace doubles every StartDoubling from StartRate, only
//     while requests wait for it, not for the ceiling.
//   - Only an answer to a request sent under the current curve tells of
//     the pace. The pause, the quota, what the service accepted and the
//     refusals in a row take every answer.
//   - A rate's refusal cuts the pace to Backoff of the rate refused: the
//     pace or, if lower, the rate requests went at (over RateSpan, or since
//     the request before, the faster). A token earned at the rate refused
//     is taken back.
//   - After probing, the rate refused is what the service accepted over
//     the last second, if it accepted any; the pace itself before a second
//     has passed since the first request went.
//   - Following, the pace grows back along CUBIC's cubic (RFC 9438) to the
//     rate refused after Recover. Cut while doubling, it doubles again,
//     from FirstBackoff of the rate refused up to the cut, first.
//   - A refusal while nothing sent since the cut was accepted begins
//     probing: one request at a time, the pace not cut. Each probe refused
//     doubles the gap; a gap is at least the pace's and ProbeShare of the
//     Retry-After, and at most the Retry-After and maxWait.
//   - Probing, a refusal of a request sent before it began says nothing of
//     the probe; an acceptance of any sent since the cut ends it, at the
//     pace before it: the service does not refuse everything.
//   - RefusedInARow refusals with no acceptance between them say a limit
//     counts requests over a span. The last, if sent before the cut,
//     re-bases the pace to Backoff of what the service accepted over the
//     last second, if lower, once a second has passed since the first went.
//   - A probe accepted after RefusedInARow refusals in a row re-bases the
//     rate refused to the most a second accepted before a refusal, if
//     lower, the cubic restarting below it.
//   - Following, once InFlightEvidence accepted are kept, a refusal of a
//     request sent with more in flight than all but one of the last
//     InFlightHistory accepted, some of which went beside another, holds
//     the Pacer to that many in flight (two at least) and starts the pace
//     afresh: those refusals were that limit's, not a rate's.
//   - A Retry-After past RoundingPause holds every request till it ends,
//     for at most maxWait; a shorter one holds only the request refused
//     (its retry).
//
// Pacers in several processes that talk to one service with the same
// credentials can share the model (Share, share.go): the model is one plain
// value (the pace as its rate, tokens and time; a pause; the quota; the
// probe) that lives in a Shared store with each member's requests in
// flight, and each step (a request asking to go, its answer, its release)
// loads it whole under the store's lock, runs as a lone Pacer's would, and
// saves it whole. So they are one Pacer whose requests come from several
// processes. A process's steps that arrive while the store answers for
// another are queued for the next round trip, which runs them all, in
// order: an answer or a release queued returns at once, and an ask waits
// for the round trip that runs it. As a request waits for that round trip
// anyway, a shared pace lets it go before its token by the process's last
// round trip (at most SharedPoll), at the token's time; the tokens it owes
// are saved with the pace. So a distant store costs a request one
// round trip, not three one after another, and its asks of one round trip
// go at the pace. Such a request's gap to the one before is the pace's, not
// what the service saw: its refusal is measured against the rate requests
// went at over RateSpan alone. One process alone steps as an unshared Pacer
// does, but that the pace's tokens round-trip to the nanosecond, its
// waiters ask again within SharedPoll, and a state left untouched for
// Forget, with nothing in flight or to wait for, is old news and starts
// afresh. A process joins with its first step, at the pace the others
// found. The state counts each member's requests in flight; a member whose
// process ended or is stopped (the store tells) is dropped at the next
// check, at most LivenessEvery apart. The waiters of one process take turns
// at asking, but for those that find its round trip under way, which ask in
// the next; they ask again within SharedPoll, as another process's answer
// wakes none of them. The members so held by the pace take turns too: the
// state keeps when each began to wait, and each asks again within
// SharedPoll of its turn, the next token's time and a token for each
// member that began before it; its process's answers do not wake it, as
// an answer never brings a token sooner. So one member, not every one,
// asks for each token, and a fleet's round trips to the store grow with
// its requests, not with its members; a token whose member comes late is
// taken by whoever asks first, a waiter that gives up leaves its turn, and
// a member gone is skipped once it is dropped. A poll held as the ask before
// it was, its turn kept, changes only the pace's growth since that ask,
// which the next step saved counts from there if the poll is not kept: a
// store that orders saves by version keeps it in place, or drops it once
// another saved since (InPlace), so that waiters' polls never make the
// others' saves stale.
//
// The store bounds its wait for its lock: a step it cannot take in time
// (ErrBusy), or whose context ends first, runs on the process's own copy of
// the model as last loaded, and the next step shares again; but a request
// does not go on that copy, whose tokens others may have spent: it asks
// again at its turn as the copy tells it, and not within SharedPoll. A
// store that runs no step for BusyFor in a row is taken for held by a run
// that stopped, and requests go on the copy too, till one runs. A step
// whose store cannot be reached (ErrAway) runs on the copy, as does one the
// store ran but did not save (its answer lost), whose request may otherwise
// go on a token no other member knows was taken. A state the store or this
// format cannot read is replaced by a fresh one, and sharing goes on; an
// Event tells either. A store that fails otherwise leaves the Pacer alone
// (Alone says why). A process whose requests go on its copy counts its own
// alone, and takes its share of the copy (alone.go): the rate the fleet
// sent, at most the pace, its tokens and a limit in flight, over the
// members live (as the store counts them, or the copy holds), so that a
// fleet cut off from its store keeps its pace.
//
// The Pacer reports, for the log, and logs nothing itself: each Ticket
// carries how long its request waited under each Hold, and each change
// of the model (a cut, probing, a limit in flight, a pause, a quota's
// reset or share, the store away or back) is an Event, taken by Events.
package pace
