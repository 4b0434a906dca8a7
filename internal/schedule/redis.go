package schedule

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// step is the schedule's three steps in Redis, on one hash (KEYS[1])
// with the fields of State: v, l (Learnt), gap, at, ai, ni, b (Busy), ls
// (LastAt). ARGV[1] is the step; ARGV[2] the version the run knew;
// ARGV[3] the slots to take, or the gap to learn; ARGV[4] the gap a take
// sets, or the busy a learn does (-1: keep); ARGV[5] what to learn;
// ARGV[6] how long the hash outlives its last step (ms). It is State's
// Take, Learn and Read as Lua: the store's clock is Redis's TIME, and
// numbers are written with %.0f, exact to 2^53 (microseconds since 1970
// are under 2^51), where Lua's tostring keeps 14 digits. It returns
// {now, v, gap, at, ai, b, first} and, when the version is not the one
// the run knew (or saved), the learnt record.
var step = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local h = redis.call('HMGET', KEYS[1], 'v', 'gap', 'at', 'ai', 'ni', 'b', 'ls')
local v, gap = tonumber(h[1]) or 0, tonumber(h[2]) or 0
local at, ai, ni = tonumber(h[3]) or 0, tonumber(h[4]) or 0, tonumber(h[5]) or 0
local busy, ls = tonumber(h[6]) or 0, tonumber(h[7]) or 0
local known, arg, first = tonumber(ARGV[2]), tonumber(ARGV[3]), -1
local function n(x) return string.format('%.0f', x) end
local function due(i) return at + (i - ai) * gap end
local function regap(g)
  local idx, nat = ni, now
  if due(ni) < now then
  elseif gap == 0 then idx, nat = ai, at
  else
    idx = math.max(ai + math.ceil((now - at) / gap), ai)
    nat = math.max(now, due(idx) - gap + g)
  end
  ai, at, gap = idx, nat, g
end
local e = math.min(now, due(ni))
if ls > 0 and e > ls then busy = busy + e - ls end
ls = math.max(ls, now)
if ARGV[1] == 'take' then
  local g = tonumber(ARGV[4])
  if g >= 0 and known == v and g ~= gap then regap(g) end
  if due(ni) < now then ai, at = ni, now end
  first = ni
  ni = ni + arg
elseif ARGV[1] == 'learn' then
  first = 0
  if known == v then
    regap(math.max(arg, 0))
    if tonumber(ARGV[4]) >= 0 then busy = tonumber(ARGV[4]) end
    v, first, known = v + 1, 1, v + 1
    redis.call('HSET', KEYS[1], 'v', n(v), 'l', ARGV[5])
  end
end
redis.call('HSET', KEYS[1], 'gap', n(gap), 'at', n(at), 'ai', n(ai), 'ni', n(ni), 'b', n(busy), 'ls', n(ls))
redis.call('PEXPIRE', KEYS[1], ARGV[6])
local out = {now, v, gap, at, ai, busy, first}
if known ~= v then out[8] = redis.call('HGET', KEYS[1], 'l') or '' end
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
func (r *Redis) Take(ctx context.Context, known int64, n int, gap time.Duration) (Word, error) {
	if n < 1 {
		return Word{}, errNone
	}
	return r.run(ctx, "take", known, int64(n), micros(gap), nil)
}

// Read tells the schedule.
func (r *Redis) Read(ctx context.Context, known int64) (Word, error) {
	return r.run(ctx, "read", known, 0, -1, nil)
}

// Learn saves learnt (State.Learn).
func (r *Redis) Learn(ctx context.Context, version int64, gap, busy time.Duration, learnt []byte) (Word, error) {
	return r.run(ctx, "learn", version, micros(gap), micros(busy), learnt)
}

func (r *Redis) run(ctx context.Context, what string, known, arg, arg2 int64, learnt []byte) (Word, error) {
	res, err := step.Run(ctx, r.rdb, []string{r.key}, what, known, arg, arg2, learnt, r.keep.Milliseconds()).Slice()
	if err != nil {
		return Word{}, err
	}
	if len(res) != 7 && len(res) != 8 {
		return Word{}, errShape
	}
	var f [7]int64
	for i := range f {
		v, ok := res[i].(int64)
		if !ok {
			return Word{}, errShape
		}
		f[i] = v
	}
	w := Word{Now: f[0], Version: f[1], Gap: f[2], AnchorAt: f[3], AnchorIdx: f[4], Busy: f[5], First: f[6]}
	if len(res) == 8 {
		l, ok := res[7].(string)
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
