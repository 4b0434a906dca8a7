// Package client talks to the browser profile service over HTTP. It knows
// nothing of Terraform's types: it takes a configuration, sends GET requests,
// and returns profiles or typed errors (see errors.go).
//
// What is HTTP stays here: the retry model (retry.go) reads status codes
// and headers and drives go-retryablehttp's hooks, the proxy's refusals
// (proxy.go) are read off its responses, and the paced transport carries
// each attempt to the pacer. What needs no request lives apart: when a
// request may go (internal/pace), masking (internal/redact), a refusal's
// reason (internal/reason), pages and records (internal/listing,
// internal/records).
package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/net/http/httpproxy"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceredis"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// Defaults for the tunable settings; the provider documents them.
const (
	DefaultMaxRetries     = 5
	DefaultMinWait        = 1 * time.Second
	DefaultMaxWait        = 30 * time.Second
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxConcurrent  = 8
	DefaultMaxBodyBytes   = 256 << 20
	DefaultMaxPages       = 10000
	responseHeaderTimeout = 30 * time.Second
	// LongestPause is the longest pause a service's header is read as:
	// one further off is shown as it was sent, as a pause of a day or more.
	LongestPause        = pace.LongestPause
	tlsHandshakeTimeout = 10 * time.Second
	maxRedirects        = 5
)

// Config is everything a Client needs. Zero values take the defaults above
// (WithDefaults), but for MaxRetries, where 0 means none.
type Config struct {
	BaseURL   *url.URL // already checked by ParseBaseURL
	Token     string
	UserAgent string

	MaxRetries        int           // retries after the first attempt; 0 means none
	MinWait           time.Duration // least wait between attempts (retry.go, waits)
	MaxWait           time.Duration // longest single wait, Retry-After included
	Timeout           time.Duration // overall deadline of one read, retries and pages included
	MaxConcurrent     int           // requests in flight at once
	RequestsPerSecond float64       // 0: no fixed ceiling, adapt to the service's 429s
	MaxBodyBytes      int64
	MaxPages          int
	Paging            *listing.Paging // nil: follow the conventions (internal/listing)
	HeaderTimeout     time.Duration   // per attempt, until response headers arrive
	Clock             pace.Clock      // what the pace waits on; nil: the wall clock (tests give virtual time)

	// SharePace makes the pace one with other processes that talk to the
	// same service with the same token (pace.Shared): on any machine that
	// reaches the Redis PaceStore names (internal/paceredis), or else on
	// this machine, in PaceDir (DefaultPaceDir when empty).
	SharePace bool
	PaceDir   string
	PaceStore string // redis:// or rediss://, checked by paceredis.Parse; it may hold a password

	// The networks users run Terraform in. Proxies come from HTTPS_PROXY,
	// HTTP_PROXY and NO_PROXY, read when the client is built, as Go and
	// Terraform define them; every TLS option applies through a proxy too.
	RootCAs      *x509.CertPool    // nil: the system's; the provider adds a private CA to them, never replaces them
	Certificates []tls.Certificate // a client certificate, for a service or gateway that asks for one
	Headers      http.Header       // a gateway's headers, sent to the base address's origin only; never Authorization, Accept or User-Agent
}

// Client is safe for concurrent use; the provider keeps one per configured
// provider block, so aliased providers never share a token or a rate budget.
type Client struct {
	cfg       Config
	base      *url.URL
	http      *retryablehttp.Client
	pacer     *pace.Pacer
	flights   singleflight.Group
	lists     sharedList // the list, read once (shared.go)
	redactor  *redact.Redactor
	logMasked []string                         // what the logger masks too (logContext): the token and the pace store's password, unless short
	bodies    *semaphore.Weighted              // MaxBodyBytes, shared by the reads in flight (budget.go)
	proxy     func(*url.URL) (*url.URL, error) // HTTPS_PROXY, HTTP_PROXY and NO_PROXY, as read at New
	// storeFault is why the Redis PaceStore names cannot work as set
	// (nil without one); faultTold, that StoreFault told it.
	storeFault func() *paceredis.Fault
	faultTold  atomic.Bool
}

// WithDefaults returns cfg with each unset (zero) setting at its default:
// the one place the defaults are applied. A MinWait over MaxWait is the
// caller's to refuse; the provider names the setting.
func (cfg Config) WithDefaults() Config {
	setDefault(&cfg.MinWait, DefaultMinWait)
	setDefault(&cfg.MaxWait, DefaultMaxWait)
	setDefault(&cfg.Timeout, DefaultTimeout)
	setDefault(&cfg.MaxConcurrent, DefaultMaxConcurrent)
	setDefault(&cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&cfg.MaxPages, DefaultMaxPages)
	setDefault(&cfg.HeaderTimeout, responseHeaderTimeout)
	cfg.MaxRetries = max(cfg.MaxRetries, 0)
	return cfg
}

// New builds a Client. It fails only on a configuration the provider should
// have refused already.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == nil {
		return nil, errors.New("client: no base URL")
	}
	if cfg.Token == "" || strings.ContainsAny(cfg.Token, " \t\r\n") {
		return nil, errors.New("client: the token is empty or holds white space")
	}
	cfg = cfg.WithDefaults()

	proxy := httpproxy.FromEnvironment().ProxyFunc()
	// Secrets besides the token: a gateway header's values, and the proxy's
	// password, which a proxy's or the service's text may echo.
	secrets := []string{cfg.Token}
	for _, values := range cfg.Headers {
		secrets = append(secrets, values...)
	}
	if p, err := proxy(cfg.BaseURL); err == nil && p != nil && p.User != nil {
		pw, _ := p.User.Password()
		secrets = append(secrets, pw)
	}
	storePassword := paceStorePassword(cfg.PaceStore)
	if storePassword != "" {
		secrets = append(secrets, storePassword)
	}

	// The budget has a chunk to spare, so that one read can always reach
	// the limit and be refused for it, rather than for the budget.
	c := &Client{cfg: cfg, base: cfg.BaseURL, redactor: redact.New(secrets...), bodies: semaphore.NewWeighted(cfg.MaxBodyBytes + 1 + bodyChunk)}
	for _, secret := range []string{cfg.Token, storePassword} {
		if len(secret) >= redact.ShortSecret {
			c.logMasked = append(c.logMasked, secret)
		}
	}
	c.redactor.Keep(cfg.BaseURL)
	c.proxy = proxy
	clock := cfg.Clock
	if clock == nil {
		clock = pace.RealClock{}
	}
	c.pacer = pace.New(clock, cfg.MaxConcurrent, cfg.RequestsPerSecond, cfg.MaxWait)
	paced := &pacedTransport{pacer: c.pacer, redactor: c.redactor}
	if cfg.SharePace {
		c.storeFault, paced.notShared = sharePace(c.pacer, cfg)
	}

	transport := &http.Transport{
		Proxy:                  func(req *http.Request) (*url.URL, error) { return proxy(req.URL) },
		OnProxyConnectResponse: proxyRefusal,
		TLSClientConfig:        &tls.Config{RootCAs: cfg.RootCAs, Certificates: cfg.Certificates, MinVersion: tls.VersionTLS12},
		DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConnsPerHost:    cfg.MaxConcurrent,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		ResponseHeaderTimeout:  cfg.HeaderTimeout,
	}
	paced.next = transport
	c.http = &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport:     paced,
			CheckRedirect: c.checkRedirect,
		},
		Logger:         nil, // requests are logged through tflog in request.go
		RetryWaitMin:   cfg.MinWait,
		RetryWaitMax:   cfg.MaxWait,
		RetryMax:       retryBudget(cfg.MaxRetries), // checkRetry counts what each retry costs
		CheckRetry:     c.checkRetry,
		Backoff:        newWaits(nil).backoff,
		RequestLogHook: beginAttempt,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
	}
	return c, nil
}

// Redact masks the token, in every form, in a text from outside (the
// service's) about to enter a message: never in the provider's own words.
func (c *Client) Redact(s string) string { return c.redactor.Redact(s) }

// display shows an address as diagnostics and logs do (redact.Redactor.RedactURL).
func (c *Client) display(u *url.URL) string { return c.redactor.RedactURL(u) }

// Timeout is the overall deadline of one read.
func (c *Client) Timeout() time.Duration { return c.cfg.Timeout }

// BaseURL is the address every request goes to.
func (c *Client) BaseURL() string { return c.base.String() }

// checkRedirect follows redirects only on the base address's own scheme, host
// and port: the token must never reach another host, and Go's default would
// forward it to subdomains.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if !sameOrigin(c.base, req.URL) {
		return fmt.Errorf("%w: redirected to %s", ErrOffHost, c.redactor.Redact(redact.Origin(req.URL)))
	}
	for _, prev := range via {
		if prev.URL.String() == req.URL.String() {
			return fmt.Errorf("%w: back to %s", errRedirectLoop, c.display(req.URL))
		}
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: stopped after %d redirects", errRedirectLoop, maxRedirects)
	}
	return nil
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}
