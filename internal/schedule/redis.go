package schedule

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// step is State.Step as Lua, on one hash (KEYS[1]) with the fields of
// State: v, l (Learnt), gap, at, ai, ni, b (Busy), ls (LastAt), a0 to a9
// (Accepted), tn (Tenth), row (InARow) and most. ARGV[1] is the step's
// kind; ARGV[2] the version the run knew; ARGV[3] the slots to take, or
// the gap to learn; ARGV[4] the gap a take sets, or the busy a learn does
// (-1: keep); ARGV[5] what to learn; ARGV[6] how long the hash outlives
// its last step (ms); ARGV[7] to [9] the answers told; ARGV[10] the time
// before which a learn lets no slot not yet due go. The store's clock
// is Redis's TIME, and numbers are written with %.0f, exact to 2^53
// (microseconds since 1970 are under 2^51), where Lua's tostring keeps 14
// digits. It returns {now, v, gap, at, ai, b, first, accepted, row, most}
// and, when the version is not the one the run knew (or saved), the
// learnt record.
var step = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local h = redis.call('HMGET', KEYS[1], 'v', 'gap', 'at', 'ai', 'ni', 'b', 'ls', 'tn', 'row', 'most',
  'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9')
local v, gap = tonumber(h[1]) or 0, tonumber(h[2]) or 0
local at, ai, ni = tonumber(h[3]) or 0, tonumber(h[4]) or 0, tonumber(h[5]) or 0
local busy, ls = tonumber(h[6]) or 0, tonumber(h[7]) or 0
local tn, row, most = tonumber(h[8]) or 0, tonumber(h[9]) or 0, tonumber(h[10]) or 0
local acc = {}
for k = 0, 9 do acc[k] = tonumber(h[11 + k]) or 0 end
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
local ta, tr = math.max(tonumber(ARGV[7]), 0), math.max(tonumber(ARGV[8]), 0)
local tt = math.min(math.max(tonumber(ARGV[9]), 0), tr)
local tenth = math.floor(now / 100000)
for k = math.max(tn + 1, tenth - 9), tenth do acc[k % 10] = 0 end
tn = math.max(tn, tenth)
acc[tn % 10] = acc[tn % 10] + ta
local accepted = 0
for k = 0, 9 do accepted = accepted + acc[k] end
if tr > 0 then most = math.max(most, accepted) end
if ta > 0 then row = tt else row = row + tr end
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
    at = math.max(at, tonumber(ARGV[10]))
    if tonumber(ARGV[4]) >= 0 then busy = tonumber(ARGV[4]) end
    v, first, known = v + 1, 1, v + 1
    redis.call('HSET', KEYS[1], 'v', n(v), 'l', ARGV[5])
  end
end
redis.call('HSET', KEYS[1], 'gap', n(gap), 'at', n(at), 'ai', n(ai), 'ni', n(ni), 'b', n(busy), 'ls', n(ls),
  'tn', n(tn), 'row', n(row), 'most', n(most), 'a0', n(acc[0]), 'a1', n(acc[1]), 'a2', n(acc[2]), 'a3', n(acc[3]),
  'a4', n(acc[4]), 'a5', n(acc[5]), 'a6', n(acc[6]), 'a7', n(acc[7]), 'a8', n(acc[8]), 'a9', n(acc[9]))
redis.call('PEXPIRE', KEYS[1], ARGV[6])
local out = {now, v, gap, at, ai, busy, first, accepted, row, most}
if known ~= v then out[11] = redis.call('HGET', KEYS[1], 'l') or '' end
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

// Step runs a in the script (State.Step).
func (r *Redis) Step(ctx context.Context, a Ask) (Word, error) {
	kind, arg, arg2 := "read", int64(0), int64(-1)
	switch a.Kind {
	case Take:
		kind, arg, arg2 = "take", int64(a.N), micros(a.Gap)
	case Learn:
		kind, arg, arg2 = "learn", max(micros(a.Gap), 0), micros(a.Busy)
	}
	res, err := step.Run(ctx, r.rdb, []string{r.key}, kind, a.Known, arg, arg2, a.Learnt, r.keep.Milliseconds(),
		a.Told.Accepted, a.Told.Refused, a.Told.Tail, a.Until).Slice()
	if err != nil {
		return Word{}, err
	}
	if len(res) != 10 && len(res) != 11 {
		return Word{}, errShape
	}
	var f [10]int64
	for i := range f {
		v, ok := res[i].(int64)
		if !ok {
			return Word{}, errShape
		}
		f[i] = v
	}
	w := Word{Now: f[0], Version: f[1], Gap: f[2], AnchorAt: f[3], AnchorIdx: f[4], Busy: f[5], First: f[6],
		Accepted: f[7], InARow: f[8], Most: f[9]}
	if len(res) == 11 {
		l, ok := res[10].(string)
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
