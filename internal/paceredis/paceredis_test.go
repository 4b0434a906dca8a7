package paceredis

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

const (
	base  = "https://api.example.test/v1"
	token = "bp_live_0123456789abcdefTOKEN"
)

var bg = context.Background()

// open joins the state in the Redis at raw, closed when the test ends.
func open(t *testing.T, raw string, roots *x509.CertPool, tok string) *Store {
	t.Helper()
	s, err := Open(raw, roots, pace.StateFormat, base, tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// save is a step that saves b, and returns what was saved before.
func save(t *testing.T, s *Store, b string) (string, error) {
	t.Helper()
	var was string
	err := s.Update(bg, func(saved []byte) ([]byte, error) {
		was = string(saved)
		return []byte(b), nil
	})
	return was, err
}

// keys is every key in the Redis at addr, with its value (a sorted set's
// members) and its time to live.
func keys(t *testing.T, addr string) map[string]string {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	names, err := rdb.Keys(bg, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range names {
		ttl := rdb.PTTL(bg, k).Val()
		if ttl <= 0 || ttl > KeepUnused {
			t.Errorf("%s expires in %s: want every key to expire, within %s", k, ttl, KeepUnused)
		}
		switch rdb.Type(bg, k).Val() {
		case "zset":
			out[k] = strings.Join(rdb.ZRange(bg, k, 0, -1).Val(), " ")
		default:
			out[k] = rdb.Get(bg, k).Val()
		}
	}
	return out
}

// TestStore_runsMeetInOneState: stores with the same base address and token
// meet in one state, each step seeing the last one's; another token is
// another state; Redis holds neither the token nor the base address.
func TestStore_runsMeetInOneState(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	a, b := open(t, "redis://"+d.Addr, nil, token), open(t, "redis://"+d.Addr+"/0", nil, token)
	other := open(t, "redis://"+d.Addr, nil, token+"x")
	if _, err := save(t, a, "one"); err != nil {
		t.Fatal(err)
	}
	if was, err := save(t, b, "two"); err != nil || was != "one" {
		t.Fatalf("b found %q (%v): want a's state", was, err)
	}
	if was, err := save(t, other, "mine"); err != nil || was != "" {
		t.Fatalf("another token found %q (%v): want no state", was, err)
	}
	if was, err := save(t, a, "three"); err != nil || was != "two" {
		t.Fatalf("a found %q (%v): want b's state", was, err)
	}
	all := keys(t, d.Addr)
	if len(all) != 6 { // two states, their versions and their live sets
		t.Errorf("keys %v: want two states, their versions and their members", all)
	}
	for k, v := range all {
		for _, secret := range []string{token, "bp_live", "example.test"} {
			if strings.Contains(k, secret) || strings.Contains(v, secret) {
				t.Errorf("%s = %q holds %q", k, v, secret)
			}
		}
	}
}

// TestStore_aStepRunsAgainOnWhatOthersSaved: a step that finds another
// member saved since the state it ran on runs again on that member's
// state, and what it then returns is saved; one that keeps finding so
// gives up after StepWait (pace.ErrBusy). A failed step saves nothing.
func TestStore_aStepRunsAgainOnWhatOthersSaved(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	a, b := open(t, "redis://"+d.Addr, nil, token), open(t, "redis://"+d.Addr, nil, token)
	var given []string
	err := a.Update(bg, func(saved []byte) ([]byte, error) {
		given = append(given, string(saved))
		if len(given) == 1 {
			if _, err := save(t, b, "b"); err != nil {
				t.Error(err)
			}
		}
		return append(saved, 'a'), nil
	})
	if err != nil || strings.Join(given, ",") != ",b" {
		t.Fatalf("a's step ran on %q (%v): want nothing, then b's", given, err)
	}
	if was, err := save(t, b, "b2"); err != nil || was != "ba" {
		t.Fatalf("b then found %q (%v): want a's step on b's state", was, err)
	}
	began, n := time.Now(), 0
	err = a.Update(bg, func(saved []byte) ([]byte, error) {
		n++
		if _, err := save(t, b, "b again"); err != nil {
			t.Error(err)
		}
		return []byte("a"), nil
	})
	if !errors.Is(err, pace.ErrBusy) || errors.Is(err, pace.ErrAway) || time.Since(began) < StepWait {
		t.Fatalf("a step that others always saved before: %v after %d tries, want busy after %s", err, n, StepWait)
	}
	if err := a.Update(bg, func([]byte) ([]byte, error) { return nil, errors.New("f failed") }); err == nil || err.Error() != "f failed" {
		t.Fatalf("a failed step: %v", err)
	}
	if was, err := save(t, b, "b3"); err != nil || was != "b again" {
		t.Fatalf("b then found %q (%v): want its own, nothing saved since", was, err)
	}
}

// TestStore_aSlightChangeIsSavedInPlace: a slight change is saved as the
// version it was made on, so that another member's save of that version
// still lands at once; and a slight step that finds a member saved since
// runs again on that member's state, and keeps it, saving nothing.
func TestStore_aSlightChangeIsSavedInPlace(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	a, b := open(t, "redis://"+d.Addr, nil, token), open(t, "redis://"+d.Addr, nil, token)
	if _, err := save(t, a, "a"); err != nil {
		t.Fatal(err)
	}
	slight := func(s *Store, b string) (given []string, err error) {
		err = s.UpdateInPlace(bg, func(saved []byte) ([]byte, bool, error) {
			given = append(given, string(saved))
			return []byte(b), true, nil
		})
		return given, err
	}
	if given, err := slight(b, "b's poll"); err != nil || strings.Join(given, ",") != "a" {
		t.Fatalf("b's slight step ran on %q (%v): want a's state", given, err)
	}
	var given []string
	err := a.Update(bg, func(saved []byte) ([]byte, error) {
		given = append(given, string(saved))
		return []byte("a again"), nil
	})
	if err != nil || strings.Join(given, ",") != "a" {
		t.Fatalf("a's step ran on %q (%v): want its own state once, b's saved in place", given, err)
	}
	if given, err := slight(b, "b's poll again"); err != nil || strings.Join(given, ",") != "b's poll,a again" {
		t.Fatalf("b's slight step ran on %q (%v): want its own state, then a's", given, err)
	}
	if was, err := save(t, b, "b"); err != nil || was != "a again" {
		t.Fatalf("b then found %q (%v): want a's state, its slight step not saved", was, err)
	}
}

// TestStore_awayUntilRedisAnswers: a Redis that is gone makes a step fail
// as pace.ErrAway; Redis is then left alone (no connection is tried) for
// Away, doubling at each failure in a row, and used again once it answers.
func TestStore_awayUntilRedisAnswers(t *testing.T) {
	d, stop := daemons.Redis(t, true)
	s := open(t, "redis://"+d.Addr, nil, token)
	// The heartbeat reads the store's time under its lock: so is it moved.
	now := time.Now()
	s.mu.Lock()
	s.now = func() time.Time { return now }
	s.mu.Unlock()
	awayFor := func() time.Duration {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.awayFor
	}
	if _, err := save(t, s, "before"); err != nil {
		t.Fatal(err)
	}
	stop()
	for i, want := range []time.Duration{Away, 2 * Away} {
		_, err := save(t, s, "while away")
		if !errors.Is(err, pace.ErrAway) || !strings.Contains(err.Error(), d.Addr) {
			t.Fatalf("step %d with Redis stopped: %v, want it away, named", i, err)
		}
		if got := awayFor(); got != want {
			t.Fatalf("left alone for %s: want %s", got, want)
		}
		if _, err := save(t, s, "still away"); !errors.Is(err, pace.ErrAway) || !strings.Contains(err.Error(), "asked again from") {
			t.Fatalf("the step after: %v, want it away without asking", err)
		}
		s.mu.Lock()
		now = now.Add(want)
		s.mu.Unlock()
	}
	_, stop = daemons.RedisAt(t, d)
	defer stop()
	if _, err := save(t, s, "after"); err != nil || awayFor() != 0 {
		t.Fatalf("once Redis answers again: %v, left alone for %s", err, awayFor())
	}
}

// TestStore_aSilentRedisCostsOneStepWait: a server that takes connections
// and never answers fails one step, within StepWait, and is not asked
// again while it is left alone.
func TestStore_aSilentRedisCostsOneStepWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer c.Close()
		}
	}()
	s := open(t, "redis://"+ln.Addr().String(), nil, token)
	for range 3 {
		if _, err := save(t, s, "x"); !errors.Is(err, pace.ErrAway) {
			t.Fatalf("a step against a silent server: %v, want it away", err)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("%d connections: want one, then none while it is left alone", n)
	}
}

// TestStore_aPasswordIsNeverShown: a user and password (ACL) are used; a
// wrong one is a store away whose message, like every message about the
// address, names neither.
func TestStore_aPasswordIsNeverShown(t *testing.T) {
	const pw = "s3cret-Pa55"
	d, _ := daemons.Redis(t, true, "user default off", "user runner on >"+pw+" ~browserprofile:pace:* "+ACL)
	if _, err := save(t, open(t, "redis://runner:"+pw+"@"+d.Addr, nil, token), "x"); err != nil {
		t.Fatalf("with the password: %v", err)
	}
	_, err := save(t, open(t, "redis://runner:wrong-"+pw+"@"+d.Addr, nil, token), "x")
	if !errors.Is(err, pace.ErrAway) {
		t.Fatalf("with a wrong password: %v, want it away", err)
	}
	texts := []string{err.Error(), Where("redis://runner:" + pw + "@" + d.Addr)}
	for _, raw := range []string{"redis://runner:" + pw + "@" + d.Addr + "/x", "redis://runner:" + pw + "@" + d.Addr + "?nonsense=1",
		"redis://runner:" + pw + "@%zz", "http://runner:" + pw + "@" + d.Addr, "redis://runner:" + pw + "@"} {
		_, err := Parse(raw)
		if err == nil {
			t.Fatalf("%s parsed", Where(raw))
		}
		texts = append(texts, err.Error())
	}
	for _, text := range texts {
		if strings.Contains(text, "s3cret") {
			t.Errorf("%q shows the password", text)
		}
	}
}

// TestName: the name depends on the format, the base address and the
// token, and shows none of them.
func TestName(t *testing.T) {
	n := Name("3", base, token)
	for _, other := range []string{Name("4", base, token), Name("3", base+"/", token), Name("3", base, token+"x")} {
		if other == n {
			t.Errorf("%s names two states", n)
		}
	}
	if strings.Contains(n, "TOKEN") || strings.Contains(n, "example") || !strings.HasPrefix(n, "browserprofile:pace:v3:{") {
		t.Errorf("name %s", n)
	}
}

// clockAt gives s a clock the test moves, and returns what moves it. The
// heartbeat reads the store's time under its lock: so is it moved.
func clockAt(s *Store) (move func(time.Duration)) {
	now := time.Now()
	s.mu.Lock()
	s.now = func() time.Time { return now }
	s.mu.Unlock()
	return func(d time.Duration) {
		s.mu.Lock()
		now = now.Add(d)
		s.mu.Unlock()
	}
}

// TestStore_aStepWhoseCallerGaveUp: a step whose caller's context ends
// before Redis answers returns that context's error: not Redis away, and
// Redis is not left alone for it.
func TestStore_aStepWhoseCallerGaveUp(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	s := open(t, "redis://"+d.Addr, nil, token)
	clockAt(s) // the heartbeat's clock stands still: no beat of its own
	if _, err := save(t, s, "x"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	err := s.Update(ctx, func(saved []byte) ([]byte, error) {
		cancel() // the caller gives up before the step's save
		return saved, nil
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, pace.ErrAway) {
		t.Fatalf("a step given up: %v, want the caller's context.Canceled", err)
	}
	if _, err := save(t, s, "y"); err != nil {
		t.Fatalf("the next step: %v, want Redis asked at once", err)
	}
}

// TestStore_timeRunsOutWhileOthersSave: a step that found the state saved
// since, and whose time runs out while it saves again (Redis paused), is
// busy: others saving first, not Redis away.
func TestStore_timeRunsOutWhileOthersSave(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	a, b := open(t, "redis://"+d.Addr, nil, token), open(t, "redis://"+d.Addr, nil, token)
	clockAt(a) // the heartbeat's clock stands still: no beat of its own
	if _, err := save(t, a, "a"); err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: d.Addr, Protocol: 2})
	defer admin.Close()
	n := 0
	err := a.Update(bg, func(saved []byte) ([]byte, error) {
		if n++; n == 1 {
			if _, err := save(t, b, "b"); err != nil {
				t.Error(err)
			}
		} else {
			admin.Do(bg, "CLIENT", "PAUSE", strconv.Itoa(int(2*StepWait/time.Millisecond)), "WRITE")
		}
		return saved, nil
	})
	admin.Do(bg, "CLIENT", "UNPAUSE")
	if !errors.Is(err, pace.ErrBusy) || errors.Is(err, pace.ErrAway) || n != 2 {
		t.Fatalf("after %d runs: %v, want busy", n, err)
	}
	if err := a.Fault(); err != nil {
		t.Fatalf("fault %v", err)
	}
	if _, err := save(t, a, "a again"); err != nil {
		t.Fatalf("the next step: %v, want Redis asked at once", err)
	}
}

// TestStore_theFirstStepReadsFirst: a member's first step reads the state
// before it runs, so that it runs once, on what others saved; on a state
// never saved, once, on nothing.
func TestStore_theFirstStepReadsFirst(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	for _, tc := range []struct{ saved, want string }{{"", ""}, {"theirs", "theirs"}} {
		tok := token + tc.saved
		if tc.saved != "" {
			if _, err := save(t, open(t, "redis://"+d.Addr, nil, tok), tc.saved); err != nil {
				t.Fatal(err)
			}
		}
		var given []string
		err := open(t, "redis://"+d.Addr, nil, tok).Update(bg, func(saved []byte) ([]byte, error) {
			given = append(given, string(saved))
			return []byte("mine"), nil
		})
		if err != nil || len(given) != 1 || given[0] != tc.want {
			t.Fatalf("a first step ran on %q (%v): want once, on %q", given, err, tc.want)
		}
	}
}

// TestStore_closeWhileAway: Close while Redis is left alone asks nothing
// of it, and fails for nothing.
func TestStore_closeWhileAway(t *testing.T) {
	d, stop := daemons.Redis(t, true)
	s := open(t, "redis://"+d.Addr, nil, token)
	if _, err := save(t, s, "x"); err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := save(t, s, "y"); !errors.Is(err, pace.ErrAway) {
		t.Fatalf("with Redis stopped: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close while away: %v, want nothing asked of Redis", err)
	}
}

// TestStore_aPasswordChangedWhileRunsGoOn: a password changed under a
// run's feet fails its next connection as a Fault; the password set back,
// the run shares again at the first step after its back-off, and the
// Fault is gone. No message shows either password.
func TestStore_aPasswordChangedWhileRunsGoOn(t *testing.T) {
	const pw, other = "s3cret-first", "s3cret-second"
	d, _ := daemons.Redis(t, true, "user default off", "user admin on >adm ~* +@all", "user runner on >"+pw+" ~browserprofile:pace:* "+ACL)
	s := open(t, "redis://runner:"+pw+"@"+d.Addr, nil, token)
	move := clockAt(s)
	if _, err := save(t, s, "x"); err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: d.Addr, Username: "admin", Password: "adm", Protocol: 2})
	defer admin.Close()
	admin.Do(bg, "ACL", "SETUSER", "runner", "resetpass", ">"+other)
	admin.Do(bg, "CLIENT", "KILL", "USER", "runner") // the run's connections end, as a restart or a failover ends them
	_, err := save(t, s, "y")
	fault := s.Fault()
	if !errors.Is(err, pace.ErrAway) || fault == nil || !strings.Contains(fault.Cause, "password") {
		t.Fatalf("with the password changed: %v, fault %v", err, fault)
	}
	for _, text := range []string{err.Error(), fault.Error()} {
		if strings.Contains(text, "s3cret") {
			t.Errorf("%q shows a password", text)
		}
	}
	admin.Do(bg, "ACL", "SETUSER", "runner", "resetpass", ">"+pw)
	move(Away)
	if _, err := save(t, s, "z"); err != nil || s.Fault() != nil {
		t.Fatalf("with the password set back: %v, fault %v", err, s.Fault())
	}
}
