package pace

import (
	"cmp"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Quota is what one answer announced.
type Quota struct {
	Limit, Remaining int       // the window's requests, and those left; -1 when not said
	Reset            time.Time // when the window resets
	Header, Raw      string    // the header that named the reset, and its value, for messages
}

// families are the headers services announce quotas in, each a reset and
// the count that remains, in the order they are read.
var families = []family{
	// IETF drafts 07 on: "policy";r=0;t=5 beside RateLimit-Policy's q, or
	// limit=10, remaining=0, reset=4.
	{reset: "RateLimit", limit: "RateLimit-Policy", after: true},
	// IETF drafts up to 06.
	{reset: "RateLimit-Reset", remaining: "RateLimit-Remaining", limit: "RateLimit-Limit", after: true},
	{reset: "X-RateLimit-Reset-After", remaining: "X-RateLimit-Remaining", limit: "X-RateLimit-Limit", after: true},
	// GitHub, GitLab and many: a Unix time, or seconds from now.
	{reset: "X-RateLimit-Reset", remaining: "X-RateLimit-Remaining", limit: "X-RateLimit-Limit"},
	{reset: "X-Rate-Limit-Reset", remaining: "X-Rate-Limit-Remaining", limit: "X-Rate-Limit-Limit"},
}

type family struct {
	reset, remaining, limit string
	after                   bool // always seconds from now, never a time
}

// LongestPause caps a reset or a Retry-After: anything further off is as
// good as never.
const LongestPause = 24 * time.Hour

// Announced reads the quota an answer announces, if any: the first family
// whose reset it names.
func Announced(h http.Header, now time.Time) (Quota, bool) {
	for _, f := range families {
		raw := strings.TrimSpace(h.Get(f.reset))
		reset, remaining, limit := raw, h.Get(f.remaining), h.Get(f.limit)
		if f.reset == "RateLimit" {
			params := structured(raw)
			reset, remaining = cmp.Or(params["reset"], params["t"]), cmp.Or(params["remaining"], params["r"])
			limit = cmp.Or(params["limit"], structured(limit)["q"])
		}
		if reset == "" {
			continue
		}
		wait, ok := SecondsOrTime(reset, now, f.after)
		if !ok {
			continue
		}
		return Quota{Limit: count(limit), Remaining: count(remaining), Reset: now.Add(wait), Header: f.reset, Raw: raw}, true
	}
	return Quota{}, false
}

// count reads a count of requests; -1 when there is none.
func count(v string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return n
	}
	return -1
}

// SecondsOrTime reads a wait as seconds from now, or, where a header may
// carry either (after false), as a Unix time in seconds (from 10^9: 2001)
// or milliseconds (from 10^12), as services differ. A value that is not a
// number, or negative, is as good as absent; one past LongestPause is LongestPause.
func SecondsOrTime(v string, now time.Time, after bool) (time.Duration, bool) {
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, false
	}
	switch {
	case after || n < 1e9:
		return time.Duration(min(n, LongestPause.Seconds()) * float64(time.Second)), true
	case n < 1e12:
		// Whole seconds and the fraction apart: in nanoseconds, a time
		// past the year 2262 would overflow.
		secs, frac := math.Modf(n)
		return Until(time.Unix(int64(secs), int64(frac*1e9)), now), true
	default:
		return Until(time.UnixMilli(int64(min(n, 1e18))), now), true
	}
}

// Until is the wait until at: none if it is past, LongestPause at most.
func Until(at, now time.Time) time.Duration {
	return min(max(at.Sub(now), 0), LongestPause)
}

// structured reads the key=value parameters of a structured header field,
// separated by commas or semicolons, quotes removed.
func structured(v string) map[string]string {
	params := map[string]string{}
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
		if k, val, ok := strings.Cut(strings.TrimSpace(part), "="); ok {
			params[strings.ToLower(strings.TrimSpace(k))] = strings.Trim(strings.TrimSpace(val), `"`)
		}
	}
	return params
}
