// Package paceredis keeps, in a Redis (or Valkey) server, the pace
// (internal/pace) that provider processes on any number of machines share
// when they talk to one service with the same credentials: the
// internal/paceshare model, with Redis where the directory was.
//
// Three keys hold one shared state, under a name derived from the base
// address and the token by PBKDF2 (NameIterations rounds of SHA-256): runs
// with the same credentials meet at one name, and the name gives the token
// away no cheaper than guessing it, each guess paying for the rounds.
// Redis holds nothing else of the credentials, and every key expires
// KeepUnused after its last use.
//   - NAME:state, the pace state (pace.StateFormat), read and written whole,
//     and NAME:version, the count of its saves.
//   - NAME:live, the members' liveness: a sorted set of each member's name
//     and the time, by Redis's clock, when it goes silent (Silent after its
//     last step or heartbeat, written every Heartbeat). A member missing
//     from it no longer counts (pace.Shared's Gone). Steps renew it and
//     count it (pace.Counted, for a process that goes alone), but do not
//     read it: Gone asks only of members this process holds no word of
//     that is still fresh, so no step carries bytes that grow with the
//     members but the state's own counts.
//
// A step takes no lock: it runs on the state as this member last saw it,
// and one script saves what the step made only if no member saved since
// (the version is the one seen), or else returns the state saved since,
// on which the step runs again. So a step is one round trip while this
// member is the last to save, and no member ever waits for another that
// stalls halfway through a step; steps that keep finding the state saved
// since for StepWait are pace.ErrBusy. A waiter's poll (pace.InPlace) is
// saved in place, as the version it ran on, so that it never makes the
// others' saves stale; one that finds the state saved since keeps what it
// found, unsaved: it waits for no save. A save refused twice in a row waits
// a random time before the next, up to a millisecond doubled at each
// refusal (at most 32 ms): members that all try again at once mostly find
// the state saved since by one of them, each attempt a round trip, and
// spread out, one after another gets through.
//
// No step waits on Redis for longer than StepWait: dialling and every
// command included. A Redis that does not answer in time, refuses a
// command or cannot be reached is away (pace.ErrAway): the step runs on
// the process's own copy of the model, at its share, and Redis is not
// asked again for Away, doubling with each failure up to AwayMost, after
// which it is used again.
//
// A failure is "never" or "not now", told apart by what Redis or TLS said
// (never). Never: the password refused or missing (WRONGPASS, NOAUTH, a
// password given to a Redis without one), a command or key the user may
// not use (NOPERM, or a script's command refused), a database that does
// not exist, a command the server does not know (renamed or disabled), a
// key on another node of a Cluster (MOVED), a certificate not trusted or
// for another name, TLS refused, or an answer no Redis gives.
// These come from the setting or the server's set-up and fail every step
// until someone changes one: Fault keeps the last such cause, for the user
// to be told, until a step passes. Anything else is not now: a Redis
// stopped, slow, paused, loading, full (OOM), read-only (a replica), or a name
// that does not resolve (DNS may come back). A scheme that does not fit
// the port is among them: Redis waits for the rest of a TLS hello it reads
// as a command, and TLS for an answer, so it is a Redis that never
// answers, as any other. Both are away alike: the
// back-off above, and the store used again as soon as it answers.
package paceredis

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

// The store's times.
const (
	// StepWait bounds every step's wait on Redis, its retries included.
	StepWait = 250 * time.Millisecond
	// Heartbeat is how often a member tells it is alive between its steps,
	// and Silent how long after its last word it no longer counts.
	Heartbeat = time.Second
	Silent    = 5 * time.Second
	// Away is how long Redis is left alone after it failed a step; each
	// failure in a row doubles it, up to AwayMost.
	Away     = time.Second
	AwayMost = 30 * time.Second
	// KeepUnused is when a key no member used expires.
	KeepUnused = time.Hour
	// NameIterations is PBKDF2's rounds for the state's name: some tens of
	// milliseconds once per process.
	NameIterations = 200_000
)

// ACL is the Redis commands a store's user needs, as an ACL rule: those of
// its scripts (run by EVALSHA, loaded by EVAL), ZREM to leave, and SELECT
// for an address that names a database other than 0. AUTH and HELLO need
// no rule. The many-runs guide gives it (a test holds the two the same).
const ACL = "+evalsha +eval +get +set +incr +pexpire +time +zadd +zcard +zrange +zrem +zremrangebyscore +select"

// saveIf saves the state ARGV[3] (KEYS[1]) as the next version (KEYS[2])
// if the version is still ARGV[2] ("" to only read), or in place, as the
// same version, when ARGV[6] is "1"; and renews member ARGV[1]'s liveness
// (KEYS[3]). It returns {1, the version saved, the live members} when it
// saved, and {0, the version, the state ("" for none), the live members}
// when it did not.
// Nothing in it grows with the members but the state's own counts.
var saveIf = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
local version = redis.call('GET', KEYS[2]) or '0'
if ARGV[2] == version then
  if ARGV[6] ~= '1' then
    version = redis.call('INCR', KEYS[2])
  end
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[5])
  return {1, tostring(version), redis.call('ZCARD', KEYS[3])}
end
return {0, version, redis.call('GET', KEYS[1]) or '', redis.call('ZCARD', KEYS[3])}
`)

// Store is one process's view of a state shared in Redis (pace.Shared).
type Store struct {
	rdb    *redis.Client
	where  string   // the server, for messages: host and port, no credentials
	keys   []string // state, version, live
	member string
	now    func() time.Time

	mu      sync.Mutex
	version string          // the version of the state last seen; "" before the first step
	state   []byte          // and that state (nil for none)
	step    context.Context // the step under way's, for Gone
	// liveTil is when, by this process's clock, each member Redis last
	// told of goes silent unless it speaks again: one that has not yet
	// is live without asking.
	liveTil  map[string]time.Time
	renewed  time.Time     // when a step last renewed this member's liveness
	live     atomic.Int64  // the live members the last step counted (Live)
	awayTil  time.Time     // Redis is not asked until then
	awayFor  time.Duration // the last wait, doubled at each failure in a row
	awayWhy  error         // the failure that began it
	fault    *Fault        // the last failure that will not pass on its own, until a step passes
	stop     chan struct{}
	stopped  sync.WaitGroup
	closeOne sync.Once
}

// Parse checks a store's address: redis:// or rediss://, a host, and what
// else go-redis reads from it (a database number, its options). Its errors
// never repeat the address, which may hold a password.
func Parse(raw string) (*redis.Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("it is not a URL")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, errors.New("it must begin with redis:// or, for TLS, rediss://")
	}
	if u.Hostname() == "" {
		return nil, errors.New("it names no host")
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%s", redactError(err.Error(), u))
	}
	return opt, nil
}

// Where is a store's address as it may be shown: its password masked.
func Where(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an address that is not a URL)"
	}
	return u.Redacted()
}

// Open joins the state shared in the Redis at raw (Parse) by the processes
// that talk to base with token, in format (the pace state's version). TLS
// (rediss://) verifies Redis's certificate against roots (nil: the
// system's), and offers none of its own. It does not wait for Redis: the
// first step finds it, or finds it away.
func Open(raw string, roots *x509.CertPool, format, base, token string) (*Store, error) {
	opt, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if opt.TLSConfig != nil {
		opt.TLSConfig.MinVersion, opt.TLSConfig.RootCAs = tls.VersionTLS12, roots
	}
	// Every wait bounded by StepWait, and no retry of go-redis's own: a
	// failed step is pace.ErrAway, and Away says when Redis is asked again.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = StepWait, StepWait, StepWait
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries, opt.DialerRetries = -1, 1
	opt.PoolSize, opt.MinIdleConns = 4, 0
	opt.PoolTimeout = StepWait
	// RESP2, no handshake beyond AUTH and SELECT: any Redis or Valkey.
	opt.Protocol, opt.DisableIdentity = 2, true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	name := Name(format, base, token)
	s := &Store{
		rdb:    redis.NewClient(opt),
		where:  opt.Addr,
		keys:   []string{name + ":state", name + ":version", name + ":live"},
		member: rand.Text(),
		now:    time.Now,
		stop:   make(chan struct{}),
	}
	s.stopped.Add(1)
	go s.heartbeat()
	return s, nil
}

// Name is the state's key prefix for base and token, in format: a hash tag
// ({...}) keeps a state's keys in one slot of a Redis Cluster.
func Name(format, base, token string) string {
	key, err := pbkdf2.Key(sha256.New, token, []byte("browserprofile pace\x00"+base), NameIterations, 16)
	if err != nil { // only for a FIPS mode's refusal of a short token
		sum := sha256.Sum256([]byte("browserprofile pace\x00" + base + "\x00" + token))
		key = sum[:16]
	}
	return "browserprofile:pace:v" + format + ":{" + hex.EncodeToString(key) + "}"
}

// Member names this process among those sharing the state.
func (s *Store) Member() string { return s.member }

var _ pace.Counted = (*Store)(nil)

// Live is how many members the last step found live, this one among them
// (pace.Counted): 0 before one ran. It takes no lock, as the Pacer asks it
// holding its own, which a step's call into the Pacer takes under s.mu.
func (s *Store) Live() int { return int(s.live.Load()) }

// Update calls f with the state last saved (nil when none was), and saves
// what f returns unless it fails, unless another member saved since the
// state f was given: then f runs again, on that member's. It waits on Redis
// at most StepWait, and no longer than ctx: pace.ErrBusy when others kept
// saving first, pace.ErrAway when Redis failed or did not answer, or while
// it is left alone after a failure.
func (s *Store) Update(ctx context.Context, f func([]byte) ([]byte, error)) error {
	return s.UpdateInPlace(ctx, func(saved []byte) ([]byte, bool, error) {
		next, err := f(saved)
		return next, false, err
	})
}

var _ pace.InPlace = (*Store)(nil)

// UpdateInPlace is Update, but that a slight change is saved in place, as
// the version it was made on, which leaves the others' saves of that
// version good; and once another member saved since, only f's run on that
// member's state is kept, unsaved, if it is slight too: the step never
// waits for a save of its own.
func (s *Store) UpdateInPlace(ctx context.Context, f func([]byte) ([]byte, bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.away(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, StepWait)
	defer cancel()
	s.step = ctx
	defer func() { s.step = nil }()
	if s.version == "" {
		if err := s.run(ctx, "", nil, false, false); err != nil && !errors.Is(err, errStale) {
			return err
		}
	}
	for tries := 0; ; tries++ {
		next, slight, err := f(s.state)
		if err != nil {
			return err
		}
		if !slight || tries == 0 { // a slight step run again keeps what it found
			err = s.run(ctx, s.version, next, slight, tries > 0)
		}
		switch {
		case err == nil:
			s.awayFor, s.fault = 0, nil
			return nil
		case !errors.Is(err, errStale):
			return err
		case spent(ctx):
			return errBusy
		}
		if tries > 0 {
			// The shift is capped before it can overflow into a bound
			// Int64N refuses: 1 ms << 5 is the 32 ms cap.
			backoff := time.Duration(mrand.Int64N(int64(time.Millisecond<<min(tries-1, 5)) + 1))
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				if errors.Is(ctx.Err(), context.Canceled) {
					return ctx.Err() // the step's caller gave up, as in run
				}
				return errBusy
			}
		}
	}
}

// errStale is a save refused: another member saved since the version given.
var errStale = errors.New("saved since")

// errBusy is a step that others kept saving before for all of StepWait.
var errBusy = fmt.Errorf("other runs saved the shared pace first for longer than %s: %w", StepWait, pace.ErrBusy)

// run saves next if the state is still at version (in place, if
// inPlace), or takes up the state saved since (errStale). Time that runs
// out once the step retried is others saving first, not Redis away.
func (s *Store) run(ctx context.Context, version string, next []byte, inPlace, retried bool) error {
	place := "0"
	if inPlace {
		place = "1"
	}
	res, err := saveIf.Run(ctx, s.rdb, s.keys, s.member, version, next, Silent.Milliseconds(), KeepUnused.Milliseconds(), place).Slice()
	switch {
	case err != nil && errors.Is(ctx.Err(), context.Canceled):
		return ctx.Err() // the step's caller gave up: no fault of Redis
	case err != nil && retried && spent(ctx):
		return errBusy
	case err != nil:
		return s.fail(err)
	}
	var saved, live int64
	if len(res) > 0 {
		saved, _ = res[0].(int64)
		live, _ = res[len(res)-1].(int64)
	}
	if saved == 1 && len(res) != 3 || saved != 1 && len(res) != 4 || live < 1 {
		return s.fail(&shapeError{})
	}
	s.renewed = s.now()
	s.live.Store(live)
	v, _ := res[1].(string)
	if saved == 1 {
		s.version, s.state = v, next
		return nil
	}
	state, _ := res[2].(string)
	s.version, s.state = v, nil
	if state != "" {
		s.state = []byte(state)
	}
	return errStale
}

// spent tells a ctx whose deadline has come, though its Err may not say so
// yet: a socket's deadline, set from it, can fire first.
func spent(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(deadline)
}

// away is the error of a step while Redis is left alone, nil when it is
// asked again.
func (s *Store) away() error {
	if s.now().Before(s.awayTil) {
		return fmt.Errorf("%w: Redis at %s %v; asked again from %s", pace.ErrAway, s.where, s.awayWhy, s.awayTil.Format(time.TimeOnly))
	}
	return nil
}

// fail leaves Redis alone for the next Away (doubled at each failure in a
// row), and says why as pace.ErrAway; a failure that will not pass on its
// own is also the store's Fault. The password is in no go-redis error: its
// AUTH failures name none.
func (s *Store) fail(err error) error {
	if cause := never(err); cause != "" {
		s.fault = &Fault{Where: s.where, Cause: cause, Err: err}
	}
	s.awayFor = min(max(2*s.awayFor, Away), AwayMost)
	s.awayTil = s.now().Add(s.awayFor)
	s.awayWhy = fmt.Errorf("failed (%w): pacing alone for %s", err, s.awayFor)
	return fmt.Errorf("%w: Redis at %s %v", pace.ErrAway, s.where, s.awayWhy)
}

// Close leaves the state: the heartbeat stops, this member leaves the live
// set, and the connections close.
func (s *Store) Close() error {
	var err error
	s.closeOne.Do(func() {
		close(s.stop)
		s.stopped.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), StepWait)
		defer cancel()
		if s.away() == nil {
			err = s.rdb.ZRem(ctx, s.keys[2], s.member).Err()
		}
		err = errors.Join(err, s.rdb.Close())
	})
	return err
}

// redactError masks u's password in a go-redis message about u.
func redactError(msg string, u *url.URL) string {
	if pw, ok := u.User.Password(); ok && pw != "" {
		for _, form := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
			msg = strings.ReplaceAll(msg, form, "***")
		}
	}
	return msg
}
