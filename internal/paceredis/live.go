package paceredis

import (
	"context"
	"maps"
	"time"

	"github.com/redis/go-redis/v9"
)

// silentIn drops the members gone silent from the live set (KEYS[1]), and
// returns, for each member of ARGV, the milliseconds until it goes silent
// by Redis's clock: 0 for one that is not live.
var silentIn = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local live = {}
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #all, 2 do live[all[i]] = tonumber(all[i + 1]) end
local left = {}
for i, m in ipairs(ARGV) do
  left[i] = live[m] and math.max(live[m] - now, 0) or 0
end
return left
`)

// beat renews member ARGV[1]'s liveness.
var beat = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// Gone tells which of members no longer count: not among the live members
// Redis holds. It is asked within a step (Update holds s.mu), at most
// every pace.LivenessEvery across the fleet. A member Redis last told
// would speak again in time is live without asking, so a round trip is
// made only for members new to this process or near their silence, and a
// step never carries the live members, whose bytes grew with them. A
// failure tells none gone; a later check asks again.
func (s *Store) Gone(members []string) []string {
	now := s.now()
	var ask []string
	for _, m := range members {
		if m != s.member && !s.liveTil[m].After(now) {
			ask = append(ask, m)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	args := make([]any, len(ask))
	for i, m := range ask {
		args[i] = m
	}
	ctx := s.step
	if ctx == nil {
		c, cancel := context.WithTimeout(context.Background(), StepWait)
		defer cancel()
		ctx = c
	}
	left, err := silentIn.Run(ctx, s.rdb, s.keys[2:], args...).Int64Slice()
	if err != nil || len(left) != len(ask) {
		return nil
	}
	if s.liveTil == nil {
		s.liveTil = map[string]time.Time{}
	}
	maps.DeleteFunc(s.liveTil, func(_ string, til time.Time) bool { return !til.After(now) })
	var gone []string
	for i, m := range ask {
		if left[i] <= 0 {
			gone = append(gone, m)
			delete(s.liveTil, m)
			continue
		}
		s.liveTil[m] = now.Add(time.Duration(left[i]) * time.Millisecond)
	}
	return gone
}

// heartbeat renews this member's liveness every Heartbeat (beatIfQuiet),
// until Close.
func (s *Store) heartbeat() {
	defer s.stopped.Done()
	tick := time.NewTicker(Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.beatIfQuiet()
		}
	}
}

// beatIfQuiet renews this member's liveness unless a step did within
// Heartbeat or Redis is left alone; a failure leaves Redis alone as a
// step's does. It holds no step up while Redis answers it. Only a step's
// success clears a Fault: the heartbeat uses fewer commands.
func (s *Store) beatIfQuiet() {
	s.mu.Lock()
	quiet := s.away() == nil && s.now().Sub(s.renewed) >= Heartbeat
	s.mu.Unlock()
	if !quiet {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), StepWait)
	err := beat.Run(ctx, s.rdb, s.keys[2:], Silent.Milliseconds(), s.member, KeepUnused.Milliseconds()).Err()
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.renewed = s.now()
	} else if s.away() == nil {
		_ = s.fail(err)
	}
}
