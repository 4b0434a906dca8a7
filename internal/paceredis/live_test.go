package paceredis

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

// TestStore_goneMembers: members that closed, or never beat, are gone;
// those alive are not, and a step counts them (Live).
func TestStore_goneMembers(t *testing.T) {
	d, _ := daemons.Redis(t, true)
	a, b, c := open(t, "redis://"+d.Addr, nil, token), open(t, "redis://"+d.Addr, nil, token), open(t, "redis://"+d.Addr, nil, token)
	for _, s := range []*Store{a, b, c} {
		if _, err := save(t, s, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var gone []string
	err := a.Update(bg, func(saved []byte) ([]byte, error) {
		gone = a.Gone([]string{a.Member(), b.Member(), c.Member(), "0123abcd"})
		return saved, nil
	})
	if err != nil || strings.Join(gone, " ") != c.Member()+" 0123abcd" {
		t.Fatalf("gone %v (%v): want c, closed, and a member never seen", gone, err)
	}
	if a.Live() != 2 || c.Live() != 3 {
		t.Fatalf("a counted %d live, c %d: want a and b, once c left; and c's own step, three", a.Live(), c.Live())
	}
	// b, which Redis said would speak again in time, is live without
	// asking: no script runs for it.
	rdb := redis.NewClient(&redis.Options{Addr: d.Addr, Protocol: 2})
	defer rdb.Close()
	before := info(t, rdb)["cmdstat_evalsha"]
	a.mu.Lock()
	gone = a.Gone([]string{a.Member(), b.Member()})
	a.mu.Unlock()
	if after := info(t, rdb)["cmdstat_evalsha"]; len(gone) != 0 || after != before {
		t.Fatalf("gone %v, scripts run %.0f then %.0f: want b live, without asking Redis", gone, before, after)
	}
}

// live is the members Redis holds live for the state of token.
func live(t *testing.T, addr string) string {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	return strings.Join(rdb.ZRange(bg, Name(pace.StateFormat, base, token)+":live", 0, -1).Val(), " ")
}

// TestStore_theHeartbeat: a member whose steps are quiet renews its
// liveness; one whose step just did, or that finds Redis gone, does not
// ask; a beat that fails leaves Redis alone as a step's failure does, and
// the member is live again at the first beat after it answers.
func TestStore_theHeartbeat(t *testing.T) {
	d, stop := daemons.Redis(t, true)
	s := open(t, "redis://"+d.Addr, nil, token)
	move := clockAt(s)
	if _, err := save(t, s, "x"); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: d.Addr, Protocol: 2})
	defer rdb.Close()
	rdb.Del(bg, Name(pace.StateFormat, base, token)+":live")
	s.beatIfQuiet()
	if got := live(t, d.Addr); got != "" {
		t.Fatalf("live %q: want no beat within a Heartbeat of a step", got)
	}
	move(Heartbeat)
	s.beatIfQuiet()
	if got := live(t, d.Addr); got != s.Member() {
		t.Fatalf("live %q: want a quiet member's beat", got)
	}
	stop()
	move(Heartbeat)
	s.beatIfQuiet()
	s.mu.Lock()
	awayFor, renewed := s.awayFor, s.renewed
	s.mu.Unlock()
	if awayFor != Away {
		t.Fatalf("after a failed beat, Redis left alone for %s: want %s", awayFor, Away)
	}
	_, stop = daemons.RedisAt(t, d)
	defer stop()
	s.beatIfQuiet()
	if got := live(t, d.Addr); got != "" {
		t.Fatalf("live %q: want no beat while Redis is left alone", got)
	}
	move(Away)
	s.beatIfQuiet()
	s.mu.Lock()
	beat := s.renewed.After(renewed)
	s.mu.Unlock()
	if got := live(t, d.Addr); got != s.Member() || !beat {
		t.Fatalf("live %q (renewed %v): want the member back at the first beat Redis answers", got, beat)
	}
}
