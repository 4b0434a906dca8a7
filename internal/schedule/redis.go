package schedule

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// step is the schedule's three steps in Redis, on one hash (KEYS[1]) with
// the fields of State: v, l (Learnt), gap, at, ai, ni; ARGV[1] the step,
// ARGV[2] the version the run knew, ARGV[3] the slots to take or the gap
// to learn, ARGV[4] what to learn, ARGV[5] how long the hash outlives its
// last step (ms). It is State's Take, Learn and a read, as Lua: the store's
// clock is Redis's TIME, and numbers are written with %.0f, exact to 2^53
// (microseconds since 1970 are under 2^51), where Lua's own tostring keeps
// 14 digits. It returns {now, v, gap, at, ai, first} and, when the version
// is not the one the run knew (or saved), the learnt record.
var step = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local h = redis.call('HMGET', KEYS[1], 'v', 'gap', 'at', 'ai', 'ni')
local v, gap = tonumber(h[1]) or 0, tonumber(h[2]) or 0
local at, ai, ni = tonumber(h[3]) or 0, tonumber(h[4]) or 0, tonumber(h[5]) or 0
local known = tonumber(ARGV[2])
local function n(x) return string.format('%.0f', x) end
local first = -1
if ARGV[1] == 'take' then
  if at + (ni - ai) * gap < now then ai, at = ni, now end
  first = ni
  ni = ni + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'at', n(at), 'ai', n(ai), 'ni', n(ni))
elseif ARGV[1] == 'learn' then
  first = 0
  if known == v then
    local ngap = math.max(tonumber(ARGV[3]), 0)
    local idx, nat = ni, now
    if gap > 0 and at + (ni - ai) * gap >= now then
      idx = math.max(ai + math.ceil((now - at) / gap), ai)
      nat = math.max(now, at + (idx - ai) * gap - gap + ngap)
    end
    ai, at, gap, v, first, known = idx, nat, ngap, v + 1, 1, v + 1
    redis.call('HSET', KEYS[1], 'v', n(v), 'l', ARGV[4], 'gap', n(gap), 'at', n(at), 'ai', n(ai), 'ni', n(ni))
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
local out = {now, v, gap, at, ai, first}
if known ~= v then out[7] = redis.call('HGET', KEYS[1], 'l') or '' end
return out
`)

// Redis is a schedule in one hash of a Redis server. Its errors are
// go-redis's, for the caller to tell a Redis away from one refusing.
type Redis struct {
	rdb  redis.Scripter
	key  string
	keep time.Duration
}

// NewRedis is the schedule at key in rdb; the key expires keep after its
// last step.
func NewRedis(rdb redis.Scripter, key string, keep time.Duration) *Redis {
	return &Redis{rdb: rdb, key: key, keep: keep}
}

// Take gives n slots (State.Take).
func (r *Redis) Take(ctx context.Context, known int64, n int) (Word, error) {
	if n < 1 {
		return Word{}, errNone
	}
	return r.run(ctx, "take", known, int64(n), nil)
}

// Read tells the schedule.
func (r *Redis) Read(ctx context.Context, known int64) (Word, error) {
	return r.run(ctx, "read", known, 0, nil)
}

// Learn saves learnt (State.Learn).
func (r *Redis) Learn(ctx context.Context, version int64, gap time.Duration, learnt []byte) (Word, error) {
	return r.run(ctx, "learn", version, gap.Microseconds(), learnt)
}

func (r *Redis) run(ctx context.Context, what string, known, arg int64, learnt []byte) (Word, error) {
	res, err := step.Run(ctx, r.rdb, []string{r.key}, what, known, arg, learnt, r.keep.Milliseconds()).Slice()
	if err != nil {
		return Word{}, err
	}
	if len(res) != 6 && len(res) != 7 {
		return Word{}, errShape
	}
	var f [6]int64
	for i := range f {
		v, ok := res[i].(int64)
		if !ok {
			return Word{}, errShape
		}
		f[i] = v
	}
	w := Word{Now: f[0], Version: f[1], Gap: f[2], AnchorAt: f[3], AnchorIdx: f[4], First: f[5]}
	if len(res) == 7 {
		l, ok := res[6].(string)
		if !ok {
			return Word{}, errShape
		}
		w.Learnt = []byte(l)
	}
	return w, nil
}

// errShape is an answer no schedule script gives: not this project's
// script, or not a Redis.
var errShape = errors.New("schedule: an answer of a shape the script never gives")

// String names the key, for messages.
func (r *Redis) String() string { return "schedule " + strconv.Quote(r.key) }
