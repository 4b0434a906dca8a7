// Package pace decides when requests may go, from what services announce
// of their rate limits and, when they announce nothing, from what they
// refuse. It knows headers, times and answers, not the provider or its
// client, and takes a Clock, so that its tests run in virtual time.
//
// The gate obeys a quota the service announces on every answer
// (X-RateLimit-*, RateLimit): no request goes while the requests that
// remain, less those in flight, would be spent before the reset; then
// requests wait for the reset. The first request goes alone, as its answer
// says whether the service announces anything.
//
// Pacer adds, for a service that announces nothing, one adaptive pace in
// x/time/rate: it doubles from StartRate until the first refusal; a
// refusal of a request sent after the last cut cuts it to Backoff of the
// rate refused; it grows back along CUBIC's cubic (RFC 9438), reaching
// the rate refused after Recover, and grows only while requests wait for
// it. A service that refuses everything after a cut is probed one request
// at a time; one that, after a cut, refuses a request sent with more in
// flight than all but one it accepted of late is held to that many in
// flight. Retry-After is honoured: past RoundingPause it holds every
// request.
package pace
