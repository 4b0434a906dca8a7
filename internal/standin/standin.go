// Package standin is a local stand-in for the browser profile service, for
// the acceptance tests, the demo and the benchmarks. It serves the two
// documented routes for several environments at once, each under its own
// prefix (/{environment}/api/v1) with its own token and profiles, and can be
// told to misbehave the ways real services and their proxies do.
//
// It depends on neither the provider nor the client.
package standin

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/ratelimit"
)

// Environment is one environment the stand-in serves.
type Environment struct {
	Name     string // the path prefix: /{Name}/api/v1
	Token    string
	Profiles []json.RawMessage // records, served byte for byte
}

// Options shape the stand-in's behaviour. The zero value is a well-behaved
// service that answers a bare JSON array in one page.
type Options struct {
	Environments []Environment

	// Shape of a list body: "array" (default), "data" ({"data": [...]}),
	// "profiles_total" ({"profiles": [...], "totalCount": n}) or
	// "data_items" ({"data": {"items": [...], "count": n}}).
	Shape string
	// Single of a one-profile body: "object" (default) or "data" ({"data": {...}}).
	Single string

	// Paging splits lists into pages of PageSize in one of PagingModes
	// (list.go): each convention comparable public APIs use, and the ways
	// services page wrongly.
	Paging   string
	PageSize int

	RateLimit float64 // requests per second accepted; above it 429 with Retry-After
	// RateBurst is the token bucket's size (default: RateLimit, one second's
	// worth). Real services allow bursts of a few requests to a few dozen.
	RateBurst int
	// RateDropAfter halves the rate limit (the token bucket's rate, or the
	// window's count) after this many requests, as a service does that
	// tightens a quota while a plan runs.
	RateDropAfter int
	// RateWindow counts RateLimit requests per wall-clock second (a fixed
	// window) instead of a token bucket.
	RateWindow bool
	// RateSliding counts RateLimit requests in any rolling second instead.
	RateSliding bool
	// Quota counts this many requests in each window of QuotaWindow (a
	// second by default), fixed from the stand-in's start or, QuotaOpened,
	// each opened by the first request after the last ended (GitHub's),
	// announced on every answer in the Announce family: "github"
	// (X-RateLimit-*, -Reset a Unix time) or "ietf" (RateLimit-Policy and
	// RateLimit), rounded up to whole seconds, or "discord" (as github, and
	// -Reset-After, to the millisecond); none when "".
	Quota       int
	QuotaWindow time.Duration
	QuotaOpened bool
	Announce    string
	// RetryAfterForm is how a 429 says when to come back: "seconds" (the
	// default, rounded up to whole seconds, as most services do), "date"
	// (an HTTP date, so whole seconds too), "reset" (no Retry-After, but
	// X-RateLimit-Reset as a Unix time, as many services send) or "none".
	RetryAfterForm string
	RetryAfter     string        // fixed Retry-After value on 429s (X-RateLimit-Reset with "reset"), instead of the computed one
	LimitEvery     int           // every Nth request answers 429 with Retry-After (RetryAfter, or 1)
	FailEvery      int           // every Nth request answers 503 with a proxy's HTML page
	ResetEvery     int           // every Nth request has its connection dropped
	Delay          time.Duration // before each request is counted and answered
	// Latency is a network's round trip: half of it before a request
	// reaches the limiters, half before its answer, whatever it is,
	// leaves.
	Latency time.Duration
	// RateCountRefused makes the rolling window (RateSliding) count the
	// requests it refuses too, as HAProxy's request-rate counters do: a
	// client that keeps sending while refused stays refused.
	RateCountRefused bool
	// LimitStatus is the status a rate limit answers: 429 unless set; 403,
	// as GitHub's limits and Google's older APIs answer theirs, with the
	// same headers.
	LimitStatus int
	// Jitter adds a random wait, up to this, before each request is
	// counted: requests reach a real service's limiter unevenly (the
	// network, a load balancer, a busy server), so one taken late can have
	// the next, sent on time, refused by a bucket of one.
	Jitter time.Duration
	// Work adds a random wait, up to this, after a request is counted and
	// accepted, before it is answered: a real service's own work (a
	// database, a cache miss) varies, so an answer can come late for a
	// request its limiter took on time.
	Work time.Duration
	// MaxInFlight refuses (429, Retry-After: 1) a request that arrives
	// while this many are being worked on, as services that limit
	// concurrent requests do, whatever the rate.
	MaxInFlight int
	Truncate    bool   // list bodies are cut off halfway
	RedirectTo  string // every API request is redirected to this origin, same path
	EchoToken   bool   // 401s quote the Authorization header, as careless proxies do
	// EchoAs makes 401s echo the token as careless services and proxies have
	// been seen to: "base64", "url", "json" (escaped, \/ included), "html",
	// "header" (in X-Request-Id), "status" (as the status line, which the
	// client cannot parse), "split" (where a body excerpt is cut).
	EchoAs string

	// Refuse answers every API request with this status as real servers
	// do: 422 as Prism's RFC 9457 problem details with a validation list,
	// 406 and 415 with the media types the server has, in Accept and
	// Content-Type.
	Refuse int

	WrongRecord   bool // a single read answers another profile's record
	ErrorObject   bool // a single read answers 200 with an error object
	RedirectLoop  bool // every API request is redirected to itself
	HugeRequestID bool // every answer carries a 900 KB X-Request-Id
	// Oversize makes the list a JSON array of this many bytes, streamed
	// without a Content-Length and never held in memory.
	Oversize int64
	// Trace, when set, gets one line per request as it is answered: when
	// it arrived (milliseconds since the stand-in started), the status,
	// and the path.
	Trace io.Writer
}

// Server is the stand-in's http.Handler. Its counters serve the tests.
type Server struct {
	opts     Options
	mux      *http.ServeMux
	bucket   *ratelimit.Bucket
	inFlight ratelimit.InFlight
	window   ratelimit.FixedWindow
	rolling  ratelimit.RollingWindow
	quota    ratelimit.Quota

	started time.Time
	traceMu sync.Mutex

	Requests     atomic.Int64 // requests received
	Limited      atomic.Int64 // requests answered 429
	ListRequests atomic.Int64 // requests of a list page that reached the list
	Header       atomic.Value // the http.Header of the last request, for tests
}

// New returns a stand-in serving opts.
func New(opts Options) *Server {
	s := &Server{opts: opts, mux: http.NewServeMux(), started: time.Now()}
	if opts.RateLimit > 0 && !opts.RateWindow && !opts.RateSliding {
		burst := opts.RateBurst
		if burst <= 0 {
			burst = max(1, int(opts.RateLimit))
		}
		s.bucket = ratelimit.NewBucket(opts.RateLimit, burst)
	}
	if opts.Quota > 0 {
		s.quota = ratelimit.Quota{Limit: opts.Quota, Window: cmp.Or(opts.QuotaWindow, time.Second), Start: s.started, Opened: opts.QuotaOpened}
	}
	for i := range opts.Environments {
		env := &opts.Environments[i]
		s.mux.HandleFunc("GET /"+env.Name+"/api/v1/browsers", s.withEnv(env, s.list))
		s.mux.HandleFunc("GET /"+env.Name+"/api/v1/browsers/{key}", s.withEnv(env, s.one))
	}
	// The web application answers every path with an HTML page, as
	// single-page apps do: a base address pointing here is wrong.
	s.mux.HandleFunc("GET /app/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><html><head><title>Browser Profiles</title></head><body><div id=\"root\">Sign in</div></body></html>")
	})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such route"})
	})
	return s
}

// ServeHTTP counts and traces the request, puts it through the limits and
// misbehaviours the options name, then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Trace != nil {
		var done func()
		w, done = s.trace(w, r)
		defer done()
	}
	n := s.Requests.Add(1)
	s.Header.Store(r.Header.Clone())
	w.Header().Set("X-Request-Id", fmt.Sprintf("req-%06d", n))
	if s.opts.HugeRequestID {
		w.Header().Set("X-Request-Id", strings.Repeat("r", 900<<10))
	}
	if !hold(r, s.opts.Delay+s.opts.Latency/2+randN(s.opts.Jitter)) {
		return
	}
	if s.opts.Latency > 0 {
		w = &lateWriter{ResponseWriter: w, r: r, late: s.opts.Latency / 2}
	}
	if s.opts.MaxInFlight > 0 {
		if !s.inFlight.Enter(s.opts.MaxInFlight) {
			s.tooMany(w, time.Second)
			return
		}
		defer s.inFlight.Leave()
	}
	// Servlet containers drop path parameters (;jsessionid=…) before routing.
	if i := strings.Index(r.URL.Path, "/browsers;"); i >= 0 {
		r.URL.Path, r.URL.RawPath = r.URL.Path[:i]+"/browsers", ""
	}
	if !s.admit(w, n) || !hold(r, randN(s.opts.Work)) || s.misbehave(w, r, n) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// trace records the request's arrival, and returns the writer to answer
// through and what writes its line when the answer is done.
func (s *Server) trace(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	arrived := time.Since(s.started)
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	return rec, func() {
		s.traceMu.Lock()
		defer s.traceMu.Unlock()
		fmt.Fprintf(s.opts.Trace, "%.1f %d %s\n", float64(arrived.Microseconds())/1000, rec.status, r.URL.Path)
	}
}

// admit puts request n through the rate limiters the options name, all
// counting it at one instant; a refusal is answered here.
func (s *Server) admit(w http.ResponseWriter, n int64) bool {
	now := time.Now()
	limit := s.opts.RateLimit
	if s.opts.RateDropAfter > 0 && n >= int64(s.opts.RateDropAfter) {
		limit /= 2 // a quota tightened mid-plan, whichever the limiter
	}
	if s.bucket != nil {
		if s.bucket.Rate() != limit {
			s.bucket.SetRate(now, limit)
		}
		if wait, ok := s.bucket.Take(now); !ok {
			s.tooMany(w, wait)
			return false
		}
	}
	if s.opts.RateWindow && s.opts.RateLimit > 0 {
		if wait, ok := s.window.Take(now, int(limit)); !ok {
			s.tooMany(w, wait)
			return false
		}
	}
	if s.opts.RateSliding && s.opts.RateLimit > 0 {
		if wait, ok := s.rolling.Take(now, int(limit), s.opts.RateCountRefused); !ok {
			s.tooMany(w, wait)
			return false
		}
	}
	if s.opts.Quota > 0 {
		remaining, reset := s.quota.Take(now)
		s.quota.Announce(w.Header(), s.opts.Announce, now, remaining, reset)
		if remaining < 0 {
			s.tooMany(w, time.Until(reset))
			return false
		}
	}
	return true
}

// misbehave answers request n as the options' failure modes say, and
// reports whether it did.
func (s *Server) misbehave(w http.ResponseWriter, r *http.Request, n int64) bool {
	api := strings.Contains(r.URL.Path, "/api/v1/")
	switch {
	case s.opts.LimitEvery > 0 && n%int64(s.opts.LimitEvery) == 0:
		s.tooMany(w, time.Second)
	case s.opts.ResetEvery > 0 && n%int64(s.opts.ResetEvery) == 0:
		dropConnection(w)
	case s.opts.FailEvery > 0 && n%int64(s.opts.FailEvery) == 0:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "<html><body><h1>503 Service Temporarily Unavailable</h1><hr>proxy</body></html>")
	case s.opts.RedirectTo != "" && api:
		http.Redirect(w, r, strings.TrimSuffix(s.opts.RedirectTo, "/")+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	case s.opts.Refuse != 0 && api:
		refuse(w, s.opts.Refuse)
	case s.opts.RedirectLoop && api:
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
	default:
		return false
	}
	return true
}

// withEnv checks the bearer token of env.
func (s *Server) withEnv(env *Environment, next func(http.ResponseWriter, *http.Request, *Environment)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		token, isBearer := strings.CutPrefix(auth, "Bearer ")
		switch {
		case auth == "":
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing Authorization header"})
		case !isBearer || token != env.Token:
			if s.opts.EchoAs != "" {
				echo(w, s.opts.EchoAs, auth)
				return
			}
			msg := map[string]string{"error": "invalid or revoked token"}
			if s.opts.EchoToken {
				msg["received"] = auth
			}
			writeJSON(w, http.StatusUnauthorized, msg)
		default:
			next(w, r, env)
		}
	}
}

func (s *Server) one(w http.ResponseWriter, r *http.Request, env *Environment) {
	key := r.PathValue("key")
	if s.opts.ErrorObject {
		writeJSON(w, http.StatusOK, map[string]any{"error": map[string]string{"code": "not_found", "profile_key": key}})
		return
	}
	for i, p := range env.Profiles {
		if s.opts.WrongRecord {
			p = env.Profiles[(i+1)%len(env.Profiles)]
		}
		var rec struct {
			Key string `json:"profile_key"`
		}
		if json.Unmarshal(env.Profiles[i], &rec) == nil && rec.Key == key {
			body := []byte(p)
			if s.opts.Single == "data" {
				body = append(append([]byte(`{"data": `), p...), '}')
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "browser profile not found"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may have gone; nothing to tell
}

// echo answers 401 quoting the Authorization header in the given form.
func echo(w http.ResponseWriter, form, auth string) {
	var body string
	switch form {
	case "base64":
		body = `{"error":"invalid token","debug":"` + base64.StdEncoding.EncodeToString([]byte("Authorization: "+auth)) + `"}`
	case "url":
		body = `{"error":"invalid token","retry":"/login?next=%2Fbrowsers&auth=` + url.QueryEscape(auth) + `"}`
	case "json":
		enc, _ := json.Marshal(auth)
		body = `{"error":"invalid token","received":` + strings.ReplaceAll(string(enc), "/", `\/`) + `}`
	case "html":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "<html><body><p>Rejected: %s</p><p>%s</p></body></html>", html.EscapeString(auth), HTMLNumeric(auth))
		return
	case "header":
		w.Header().Set("X-Request-Id", auth)
		body = `{"error":"invalid token"}`
	case "status":
		if hj, ok := w.(http.Hijacker); ok {
			if conn, buf, err := hj.Hijack(); err == nil {
				fmt.Fprintf(buf, "HTTP/1.1 %s\r\nContent-Length: 0\r\n\r\n", strings.TrimPrefix(auth, "Bearer "))
				buf.Flush()
				conn.Close()
				return
			}
		}
	case "split":
		// The token straddles the 300th character, where excerpts are cut.
		body = `{"error":"invalid token","pad":"` + strings.Repeat("x", 240) + `","received":"` + auth + `"}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, body)
}

// HTMLNumeric writes every character but letters and digits as a numeric
// character reference (&#43;), as some templating engines do.
func HTMLNumeric(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "&#%d;", r)
		}
	}
	return b.String()
}

// dropConnection closes the connection without an answer, as a crashing
// backend or an idle-timeout on a load balancer does.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// statusRecorder remembers the status a handler wrote, for the trace.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// refuse answers status with the body a real server sends with it.
func refuse(w http.ResponseWriter, status int) {
	switch status {
	case http.StatusUnprocessableEntity:
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		io.WriteString(w, `{"type":"https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY","title":"Invalid request","status":422,`+
			`"detail":"Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.",`+
			`"validation":[{"location":["query","limit"],"severity":"Error","code":"pattern","message":"must match pattern \"^[0-9]+$\""}]}`)
	case http.StatusNotAcceptable, http.StatusUnsupportedMediaType:
		w.Header().Set("Accept", "text/csv")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		io.WriteString(w, http.StatusText(status))
	default:
		w.WriteHeader(status)
	}
}
