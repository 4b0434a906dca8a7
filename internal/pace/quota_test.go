package pace

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Every family of quota headers is read, resets as Unix times told from
// seconds from now.
func TestAnnounced_readsEveryFamily(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	unix := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	for name, tc := range map[string]struct {
		h         http.Header
		remaining int
		reset     time.Duration
		header    string
	}{
		"GitHub, a Unix time":        {http.Header{"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {"42"}, "X-Ratelimit-Reset": {unix(7 * time.Second)}}, 42, 7 * time.Second, "X-RateLimit-Reset"},
		"seconds from now":           {http.Header{"X-Ratelimit-Remaining": {"3"}, "X-Ratelimit-Reset": {"5"}}, 3, 5 * time.Second, "X-RateLimit-Reset"},
		"milliseconds since 1970":    {http.Header{"X-Ratelimit-Remaining": {"3"}, "X-Ratelimit-Reset": {strconv.FormatInt(now.Add(1500*time.Millisecond).UnixMilli(), 10)}}, 3, 1500 * time.Millisecond, "X-RateLimit-Reset"},
		"X-Rate-Limit":               {http.Header{"X-Rate-Limit-Remaining": {"9"}, "X-Rate-Limit-Reset": {unix(2 * time.Second)}}, 9, 2 * time.Second, "X-Rate-Limit-Reset"},
		"IETF up to draft 06":        {http.Header{"Ratelimit-Limit": {"100"}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"3"}}, 0, 3 * time.Second, "RateLimit-Reset"},
		"IETF structured, early":     {http.Header{"Ratelimit": {"limit=10, remaining=4, reset=6"}}, 4, 6 * time.Second, "RateLimit"},
		"IETF structured, later":     {http.Header{"Ratelimit-Policy": {`"default";q=100;w=10`}, "Ratelimit": {`"default";r=17;t=4`}}, 17, 4 * time.Second, "RateLimit"},
		"a reset, nothing remaining": {http.Header{"X-Ratelimit-Reset": {"2"}}, -1, 2 * time.Second, "X-RateLimit-Reset"},
	} {
		q, ok := Announced(tc.h, now)
		if !ok || q.Remaining != tc.remaining || q.Reset.Sub(now) != tc.reset || q.Header != tc.header {
			t.Errorf("%s: %+v %v", name, q, ok)
		}
	}
	for _, h := range []http.Header{{}, {"X-Ratelimit-Reset": {"soon"}}, {"X-Ratelimit-Remaining": {"5"}}} {
		if q, ok := Announced(h, now); ok {
			t.Errorf("%v: %+v", h, q)
		}
	}
}
