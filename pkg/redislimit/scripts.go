package redislimit

import "github.com/redis/go-redis/v9"

// admitScript decides one request and, only when every limit lets it
// pass, records it: a refused request spends nothing, so a key over its
// own rate does not use its tenant's, as with the per-process limits.
//
// KEYS: the key's rate state, the tenant's rate state, the tenant's
// streams (a sorted set of stream ids by lease expiry), the tenant's
// tokens of the day. ARGV: now (ms), the key's emission interval (ms) and
// burst, the tenant's interval and burst, the most streams (0: no
// limit), this stream's id, its lease expiry (ms), the daily quota (0:
// none), tokens this process used and has not written yet, then the
// tenant's streams this process ended and has not removed yet: removed
// first, so a server's own ended stream never refuses its next request.
//
// Rates are GCRA: a state is the theoretical arrival time (tat) of the
// next request; a request passes when tat - burst*interval <= now. The
// answer is {verdict, retry after in ms, tokens used today}.
var admitScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local function gcra(key, interval, burst)
  if interval <= 0 then return nil, 0 end
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local next = tat + interval
  local allow_at = next - burst * interval
  if allow_at > now then return nil, math.ceil(allow_at - now) end
  return next, 0
end
local key_tat, wait = gcra(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
if wait > 0 then return {1, wait, 0} end
local tenant_tat, twait = gcra(KEYS[2], tonumber(ARGV[4]), tonumber(ARGV[5]))
if twait > 0 then return {2, twait, 0} end
local used = 0
local quota = tonumber(ARGV[9])
if quota > 0 then
  local v = redis.call('GET', KEYS[4])
  if not v then return {5, 0, 0} end
  used = tonumber(v)
  if used + tonumber(ARGV[10]) >= quota then return {3, 0, used} end
end
local most = tonumber(ARGV[6])
if #ARGV > 10 then redis.call('ZREM', KEYS[3], unpack(ARGV, 11)) end
if most > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) >= most then
    local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    return {4, math.max(1, tonumber(first[2]) - now), used}
  end
  redis.call('ZADD', KEYS[3], ARGV[8], ARGV[7])
  redis.call('PEXPIRE', KEYS[3], math.max(1, tonumber(ARGV[8]) - now))
end
if key_tat then
  redis.call('SET', KEYS[1], string.format('%.3f', key_tat), 'PX', math.max(1, math.ceil(key_tat - now)))
end
if tenant_tat then
  redis.call('SET', KEYS[2], string.format('%.3f', tenant_tat), 'PX', math.max(1, math.ceil(tenant_tat - now)))
end
return {0, 0, used}
`)

// admitScript's verdicts are the Refusal values in their order (limiter.go):
// 0 passed, 1 key rate, 2 tenant rate, 3 quota used, 4 streams busy,
// 5 unseeded.

// seedScript sets a day's token counter that Redis does not hold (a new
// day, or a Redis that restarted empty) unless another server set it
// first, and returns it. KEYS: the counter; ARGV: tokens, ttl (ms).
var seedScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return tonumber(redis.call('GET', KEYS[1]))
`)

// addScript adds tokens to a day's counter only while Redis holds it, and
// returns the sum, or -1. A counter Redis lost is seeded again from the
// database, which has these tokens too; adding to nothing would count
// them from zero and lose the rest of the day. KEYS: the counter; ARGV:
// tokens.
var addScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`)
