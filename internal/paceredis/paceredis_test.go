package paceredis

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/schedule"
)

const (
	base  = "https://api.example.test/v1"
	token = "bp_live_0123456789abcdefTOKEN"
)

var bg = context.Background()

// open reaches the schedule in the Redis at raw, closed when the test ends.
func open(t *testing.T, raw string, roots *x509.CertPool, tok string) *Store {
	t.Helper()
	s, err := Open(raw, roots, pace.StateFormat, base, tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// take is a step that takes one slot, and returns its number.
func take(s *Store) (int64, error) {
	w, err := s.Step(bg, schedule.Ask{Kind: schedule.Take, N: 1, Gap: 10 * time.Millisecond})
	return w.First, err
}

// keys is every key in the Redis at addr, with its fields, and checks that
// each expires.
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
		out[k] = fmt.Sprint(rdb.HGetAll(bg, k).Val())
	}
	return out
}

// TestStore_runsMeetInOneSchedule: stores with the same base address and
// token meet in one schedule, each take following the last one's; another
// token is another schedule; Redis holds neither the token nor the base
// address.
func TestStore_runsMeetInOneSchedule(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	a, b := open(t, "redis://"+d.Addr, nil, token), open(t, "redis://"+d.Addr+"/0", nil, token)
	other := open(t, "redis://"+d.Addr, nil, token+"x")
	for i, tc := range []struct {
		s    *Store
		want int64
	}{{a, 0}, {b, 1}, {other, 0}, {a, 2}} {
		if got, err := take(tc.s); err != nil || got != tc.want {
			t.Fatalf("take %d: slot %d (%v), want %d", i, got, err, tc.want)
		}
	}
	all := keys(t, d.Addr)
	if len(all) != 2 {
		t.Errorf("keys %v: want two schedules", all)
	}
	for k, v := range all {
		if !strings.HasSuffix(k, ":schedule") {
			t.Errorf("key %s: want a schedule's", k)
		}
		for _, secret := range []string{token, "bp_live", "example.test"} {
			if strings.Contains(k, secret) || strings.Contains(v, secret) {
				t.Errorf("%s = %q holds %q", k, v, secret)
			}
		}
	}
}

// TestStore_aSilentRedisCostsOneStepWait: a server that takes connections
// and never answers fails a step within pace.StepWait, naming the server.
func TestStore_aSilentRedisCostsOneStepWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	s := open(t, "redis://"+ln.Addr().String(), nil, token)
	began := time.Now()
	if _, err := take(s); err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("a step against a silent server: %v, want it failed, the server named", err)
	}
	if took := time.Since(began); took > 2*pace.StepWait {
		t.Fatalf("the step took %s: want about %s", took, pace.StepWait)
	}
	if s.Fault() != nil {
		t.Fatalf("fault %v: want none, for a server that may answer later", s.Fault())
	}
}

// TestStore_aPasswordIsNeverShown: a user and password (ACL) are used; a
// wrong one fails the step with a message that, like every message about
// the address, names neither.
func TestStore_aPasswordIsNeverShown(t *testing.T) {
	const pw = "s3cret-Pa55"
	d, _ := daemons.Redis(t, true, "user default off", "user runner on >"+pw+" ~browserprofile:pace:* "+ACL)
	if _, err := take(open(t, "redis://runner:"+pw+"@"+d.Addr, nil, token)); err != nil {
		t.Fatalf("with the password: %v", err)
	}
	_, err := take(open(t, "redis://runner:wrong-"+pw+"@"+d.Addr, nil, token))
	if err == nil {
		t.Fatal("with a wrong password: the step passed")
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
			t.Errorf("%s names two schedules", n)
		}
	}
	if strings.Contains(n, "TOKEN") || strings.Contains(n, "example") || !strings.HasPrefix(n, "browserprofile:pace:v3:{") {
		t.Errorf("name %s", n)
	}
}

// TestStore_aStepWhoseCallerGaveUp: a step whose caller's context ended
// returns that context's error, and is no Fault.
func TestStore_aStepWhoseCallerGaveUp(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	s := open(t, "redis://"+d.Addr, nil, token)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := s.Step(ctx, schedule.Ask{Kind: schedule.Read}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a step given up: %v, want the caller's context.Canceled", err)
	}
	if _, err := take(s); err != nil || s.Fault() != nil {
		t.Fatalf("the next step: %v (fault %v)", err, s.Fault())
	}
}

// TestStore_aPasswordChangedWhileRunsGoOn: a password changed under a
// run's feet fails its next connection as a Fault; the password set back,
// the next step passes, and the Fault is gone. No message shows either
// password.
func TestStore_aPasswordChangedWhileRunsGoOn(t *testing.T) {
	const pw, other = "s3cret-first", "s3cret-second"
	d, _ := daemons.Redis(t, true, "user default off", "user admin on >adm ~* +@all", "user runner on >"+pw+" ~browserprofile:pace:* "+ACL)
	s := open(t, "redis://runner:"+pw+"@"+d.Addr, nil, token)
	if _, err := take(s); err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: d.Addr, Username: "admin", Password: "adm", Protocol: 2})
	defer admin.Close()
	admin.Do(bg, "ACL", "SETUSER", "runner", "resetpass", ">"+other)
	admin.Do(bg, "CLIENT", "KILL", "USER", "runner") // the run's connections end, as a restart or a failover ends them
	_, err := take(s)
	fault := s.Fault()
	if err == nil || fault == nil || !strings.Contains(fault.Cause, "password") {
		t.Fatalf("with the password changed: %v, fault %v", err, fault)
	}
	for _, text := range []string{err.Error(), fault.Error()} {
		if strings.Contains(text, "s3cret") {
			t.Errorf("%q shows a password", text)
		}
	}
	admin.Do(bg, "ACL", "SETUSER", "runner", "resetpass", ">"+pw)
	if _, err := take(s); err != nil || s.Fault() != nil {
		t.Fatalf("with the password set back: %v, fault %v", err, s.Fault())
	}
}
