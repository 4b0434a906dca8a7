// Package paceredis keeps, in a Redis (or Valkey) server, the schedule
// (internal/schedule) by which provider processes on any number of
// machines share a pace when they talk to one service with the same
// credentials: the internal/paceshare store, with Redis where the
// directory was.
//
// One hash holds a fleet's schedule, NAME:schedule, under a name derived
// from the base address and the token by PBKDF2 (NameIterations rounds of
// SHA-256): runs with the same credentials meet at one name, and the name
// gives the token away no cheaper than guessing it, each guess paying for
// the rounds. Redis holds nothing else of the credentials, and the hash
// expires KeepUnused after its last use. Each step is one script, one
// round trip, whose bytes do not grow with the runs (schedule.Redis).
//
// No step waits on Redis for longer than pace.StepWait: dialling and every
// command included, with no retry of go-redis's own. A Redis that does not
// answer in time, refuses a command or cannot be reached fails the step:
// the run paces alone, and leaves Redis alone for a while (the Taker's
// back-off, internal/schedule).
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
// back-off, and the store used again as soon as it answers.
package paceredis

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/schedule"
)

// The store's times.
const (
	// KeepUnused is when a schedule no run used expires.
	KeepUnused = time.Hour
	// NameIterations is PBKDF2's rounds for the schedule's name: some tens
	// of milliseconds once per process.
	NameIterations = 200_000
)

// ACL is the Redis commands a store's user needs, as an ACL rule: those of
// its script (run by EVALSHA, loaded by EVAL), and SELECT for an address
// that names a database other than 0. AUTH and HELLO need no rule. The
// many-runs guide gives it (a test holds the two the same).
const ACL = "+evalsha +eval +hmget +hset +hget +pexpire +time +select"

// Store is one process's way to the schedule its fleet shares in Redis
// (schedule.Store).
type Store struct {
	rdb   *redis.Client
	where string // the server, for messages: host and port, no credentials
	sched *schedule.Redis

	mu    sync.Mutex
	fault *Fault // the last failure that will not pass on its own, until a step passes
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

// Open reaches the schedule shared in the Redis at raw (Parse) by the
// processes that talk to base with token, in format (the pace's record's,
// pace.StateFormat). TLS (rediss://) verifies Redis's certificate against
// roots (nil: the system's), and offers none of its own. It does not wait
// for Redis: the first step finds it, or finds it away.
func Open(raw string, roots *x509.CertPool, format, base, token string) (*Store, error) {
	opt, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if opt.TLSConfig != nil {
		opt.TLSConfig.MinVersion, opt.TLSConfig.RootCAs = tls.VersionTLS12, roots
	}
	// Every wait bounded by the step's, and no retry of go-redis's own: a
	// failed step is the Taker's to back off from.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = pace.StepWait, pace.StepWait, pace.StepWait
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries, opt.DialerRetries = -1, 1
	opt.PoolSize, opt.MinIdleConns = 4, 0
	opt.PoolTimeout = pace.StepWait
	// RESP2, no handshake beyond AUTH and SELECT: any Redis or Valkey.
	opt.Protocol, opt.DisableIdentity = 2, true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	rdb := redis.NewClient(opt)
	return &Store{rdb: rdb, where: opt.Addr, sched: schedule.NewRedis(rdb, Name(format, base, token)+":schedule", KeepUnused)}, nil
}

// Name is the schedule's key prefix for base and token, in format: a hash
// tag ({...}) keeps a fleet's keys in one slot of a Redis Cluster.
func Name(format, base, token string) string {
	key, err := pbkdf2.Key(sha256.New, token, []byte("browserprofile pace\x00"+base), NameIterations, 16)
	if err != nil { // only for a FIPS mode's refusal of a short token
		sum := sha256.Sum256([]byte("browserprofile pace\x00" + base + "\x00" + token))
		key = sum[:16]
	}
	return "browserprofile:pace:v" + format + ":{" + hex.EncodeToString(key) + "}"
}

// Step runs a on the schedule (schedule.Store), waiting on Redis no
// longer than pace.StepWait. A failure says which Redis; one that will not
// pass on its own is also the store's Fault, until a step passes.
func (s *Store) Step(ctx context.Context, a schedule.Ask) (schedule.Word, error) {
	ctx, cancel := context.WithTimeout(ctx, pace.StepWait)
	defer cancel()
	w, err := s.sched.Step(ctx, a)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.fault = nil
		return w, nil
	case errors.Is(err, context.Canceled):
		return w, err // the step's caller gave up: no fault of Redis
	}
	if cause := never(err); cause != "" {
		s.fault = &Fault{Where: s.where, Cause: cause, Err: err}
	}
	return w, fmt.Errorf("the schedule in Redis at %s failed: %w", s.where, err)
}

// Close closes the connections.
func (s *Store) Close() error { return s.rdb.Close() }

// redactError masks u's password in a go-redis message about u.
func redactError(msg string, u *url.URL) string {
	if pw, ok := u.User.Password(); ok && pw != "" {
		for _, form := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
			msg = strings.ReplaceAll(msg, form, "***")
		}
	}
	return msg
}
