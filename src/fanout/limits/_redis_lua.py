"""The Lua scripts of :class:`~fanout.limits.RedisLimiter` (``limits/_redis.py``): each
runs atomically in redis, on redis's clock (``TIME``), so that processes on hosts whose
clocks disagree share one schedule."""

from __future__ import annotations

__all__ = ["ADJUST", "CLAIM", "CREDIT", "DONE", "HOLD", "PAUSE", "PAUSE_LEFT", "RELEASE", "RESERVE"]

# Shared by the scripts that take reservations and give them back. A held
# reservation is a member "<owner>|<n>|<span ms>" of a schedule's held set, scored by
# the time of its slot. release(): remove the held reservations (of those after
# `from`) that gone(member, owner) picks, move the later ones forward by the span
# removed before them (never before now), and take the spans off the schedule.
# sweep(): release the waiting reservations of owners whose lease ran out (or is
# gone), and forget reservations whose slot came more than a minute ago (used).
_HELD = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function release(sched, held, now, from, gone)
  local entries = redis.call('ZRANGEBYSCORE', held, from, '+inf', 'WITHSCORES')
  local shift = 0
  for i = 1, #entries, 2 do
    local m = entries[i]
    local at = tonumber(entries[i + 1])
    local owner, span = string.match(m, '^([^|]+)|[^|]+|([^|]+)$')
    if gone(m, owner) then
      redis.call('ZREM', held, m)
      shift = shift + tonumber(span)
    elseif shift > 0 and at > now then
      local moved = at - shift
      if moved < now then moved = now end
      redis.call('ZADD', held, moved, m)
    end
  end
  if shift > 0 then
    local tat = tonumber(redis.call('GET', sched) or '0') - shift
    if tat < now then tat = now end
    redis.call('SET', sched, string.format('%.3f', tat), 'PX', math.ceil(tat - now) + 60000)
  end
end
local function sweep(sched, held, owners, now)
  redis.call('ZREMRANGEBYSCORE', held, '-inf', now - 60000)
  local alive = {}
  release(sched, held, now, '(' .. now, function(m, owner)
    if alive[owner] == nil then
      alive[owner] = tonumber(redis.call('HGET', owners, owner) or '0') >= now
    end
    return not alive[owner]
  end)
end
local function renew(owners, owner, now, lease)
  redis.call('HSET', owners, owner, string.format('%.3f', now + lease))
  redis.call('PEXPIRE', owners, 3600000)
  if redis.call('HLEN', owners) > 64 then
    local all = redis.call('HGETALL', owners)
    for i = 1, #all, 2 do
      if tonumber(all[i + 1]) < now - 3600000 then redis.call('HDEL', owners, all[i]) end
    end
  end
end
"""

# A send's claim, the moment it goes: the reserved slots say when each may go, but a
# process whose event loop is late (a loaded machine) sends late, and slots missed by
# late senders would let their sends arrive together with the on-time ones after them:
# more in a window than the schedule has slots for. So the sends themselves keep the
# schedule's spacing, as the local limiter's do (the claimed key holds "the next send
# time|the interval of its claimer"; a faster claimer takes the next time at its own
# interval): claim(claimed key, pause key, waiting
# set, now, interval, early, member, lookahead) takes the next send time (one interval
# after the last claim, never before now) if it is at most ``lookahead`` ms away, and
# returns {'0', 0, ms until it, now}: the claimer sends then (or, if it wakes later than
# that, claims again: the time it was given is lost, never bunched with the next).
# During a pause it returns {ms left of it, 1, '', ''}; else {ms until the claimer's
# turn, 0, '', ''}: the next send time plus an interval for each claimer that waited before it
# (the waiting set, scored by when each first waited, a minute at most), so that the
# waiters come back one by one rather than all at once. A send the server has room
# for now (``early``: the reported room or a reset's) goes now, and takes its place.
_CLAIM = """
local function claim(key, pause, waiting, now, interval, early, member, lookahead)
  local paused = tonumber(redis.call('GET', pause) or '0')
  if paused > now then return {string.format('%.3f', paused - now), 1, '', ''} end
  local last, theirs = string.match(redis.call('GET', key) or '', '^([^|]+)|([^|]+)$')
  local ctat = tonumber(last or '0')
  if theirs ~= nil and ctat > now and tonumber(theirs) > interval then
    ctat = ctat - (tonumber(theirs) - interval)
  end
  if early or ctat - now <= lookahead then
    if early or ctat < now then ctat = math.max(ctat, now) + interval else ctat = ctat + interval end
    redis.call('SET', key, string.format('%.3f|%s', ctat, interval), 'PX', math.ceil(ctat - now) + 60000)
    redis.call('ZREM', waiting, member)
    local at = ctat - interval
    if early or at < now then at = now end
    return {'0', 0, string.format('%.3f', at - now), string.format('%.3f', now)}
  end
  redis.call('ZREMRANGEBYSCORE', waiting, '-inf', now - 60000)
  redis.call('ZADD', waiting, 'NX', now, member)
  redis.call('PEXPIRE', waiting, 120000)
  local ahead = redis.call('ZCOUNT', waiting, '-inf', '(' .. redis.call('ZSCORE', waiting, member))
  return {string.format('%.3f', ctat - now - lookahead / 2 + ahead * interval), 0, '', ''}
end
"""

# KEYS: schedule, send counter, credit hash, in-flight set, resets list, held set,
# owners hash, rate key, claimed key, pause key, claim waiting set, reset trust hash.
# ARGV: interval_ms per unit, cost units, 1 for the request schedule (counts the send,
# may use the reported room), 0 for tokens; the owner, its lease ms, the member to hold
# the slot by, 1 to claim the send now if it may go now, and what an endpoint memory
# says of the resets ("trusted", "distrusted" or ""). Returns {wait ms (string), seq, 1 if the slot is held (the wait is
# for it), the interval the last reserver paced at ("" if none), 1 if the server's word
# lets it go before its slot (early), ms until its claimed send time ('': not claimed;
# see _CLAIM, with a lookahead of half an interval), now, 1 if only a reset's promise
# lets it go before its slot, 1 if it is to check that promise, what is known of the
# resets}: the reserved slot comes after ``wait`` ms, or sooner if the reported room
# covers it (now, or when a reported reset has emptied the endpoint's window).
#
# The rate key holds the last reservation's "interval|cost". A process that paces
# faster than the last reserver (another process with other Limits on the namespace)
# spaces its slot after that reservation at its own rate, not at the slower one's: a
# process at rpm=0.5 whose call was cancelled would otherwise leave its one sent
# request's two-minute slot in the way of every process at rpm=6000. (The claims keep
# "time|interval" alike.) Its waiting reservations still queue ahead of later ones.
#
# The reset trust hash holds what every process learned of the resets (limits/_resets.py
# ResetTrust, shared: ``state`` "trusted", "distrusted" or "unknown"/absent, ``kept``,
# and the send checking a promise, ``verifying``, until ``vuntil``). The promised room
# of a reset is used as ResetTrust.usable() says: trusted, or unknown with no check
# under way (a check's process that died frees it 30 s after its send); the first send
# that only a reset lets go early, while unknown, is the check (ResetTrust.sending()).
# The memory's word is taken while nothing is known (ResetTrust.seed()).
RESERVE = (
    _HELD
    + _CLAIM
    + """
local now = now_ms()
renew(KEYS[7], ARGV[4], now, tonumber(ARGV[5]))
sweep(KEYS[1], KEYS[6], KEYS[7], now)
local interval = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local prev, prev_cost = string.match(redis.call('GET', KEYS[8]) or '', '^([^|]+)|([^|]+)$')
if prev ~= nil and tat > now and tonumber(prev) > interval then
  tat = tat - tonumber(prev_cost) * (tonumber(prev) - interval)
end
local wait = tat - now
if wait < 0 then wait = 0 end
local slot_wait = wait
local seq = -1
local on_reset, probe, tstate = 0, 0, ''
if ARGV[3] == '1' then
  tstate = redis.call('HGET', KEYS[12], 'state') or 'unknown'
  if tstate == 'unknown' and ARGV[8] ~= '' and tonumber(redis.call('HGET', KEYS[12], 'kept') or '0') == 0 then
    tstate = ARGV[8]
    redis.call('HSET', KEYS[12], 'state', tstate)
    redis.call('PEXPIRE', KEYS[12], 3600000)
  end
end
local checking = tonumber(redis.call('HGET', KEYS[12], 'vuntil') or '0') >= now
local usable = tstate == 'trusted' or (tstate == 'unknown' and not checking)
if ARGV[3] == '1' then
  seq = redis.call('INCR', KEYS[2]) - 1
  redis.call('PEXPIRE', KEYS[2], 3600000)
  redis.call('ZADD', KEYS[4], seq, seq)
  redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -4097)
  redis.call('PEXPIRE', KEYS[4], 3600000)
  local cseq = tonumber(redis.call('HGET', KEYS[3], 'seq') or '-1')
  local base = tonumber(redis.call('HGET', KEYS[3], 'base') or '0')
  local mark = tonumber(redis.call('HGET', KEYS[3], 'mark') or '0')
  if cseq >= 0 and base - (seq - mark) >= 1 then
    wait = 0
  elseif cseq >= 0 and usable then
    for _, r in ipairs(redis.call('LRANGE', KEYS[5], 0, -1)) do
      local at, full, rmark = string.match(r, '([^|]+)|([^|]+)|([^|]+)')
      if tonumber(full) - (seq - tonumber(rmark)) >= 1 and tonumber(at) - now < wait then
        wait = tonumber(at) - now
      end
    end
    if wait < 0 then wait = 0 end
    if wait < slot_wait then on_reset = 1 end
  end
  if on_reset == 1 and tstate == 'unknown' then
    redis.call('HSET', KEYS[12], 'verifying', seq, 'vuntil', string.format('%.3f', now + wait + 30000))
    redis.call('PEXPIRE', KEYS[12], 3600000)
    probe = 1
  end
end
if tat < now then tat = now end
local new_tat = tat + cost * interval
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 60000)
local held = 0
if wait > 0 and wait >= slot_wait then
  redis.call('ZADD', KEYS[6], tat, ARGV[6])
  redis.call('PEXPIRE', KEYS[6], math.ceil(new_tat - now) + 3600000)
  held = 1
end
redis.call('SET', KEYS[8], ARGV[1] .. '|' .. ARGV[2], 'PX', 3600000)
local early = 0
if ARGV[3] == '1' and wait < slot_wait then early = 1 end
local claimed = ''
if ARGV[7] == '1' and wait <= 0 then
  local got = claim(KEYS[9], KEYS[10], KEYS[11], now, interval, early == 1, ARGV[6], interval / 2)
  if got[1] == '0' then claimed = got[3] end
end
return {string.format('%.3f', wait), seq, held, prev or '', early, claimed, string.format('%.3f', now),
        on_reset, probe, tstate}
"""
)

# KEYS: claimed key, pause key, claim waiting set. ARGV: interval ms, 1 if the send is
# early, its member (see _CLAIM; the lookahead is half an interval). Returns {ms to
# wait before claiming again ('0': claimed), 1 if for a pause, ms until the claimed
# send time, now}.
CLAIM = (
    _CLAIM
    + """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
return claim(KEYS[1], KEYS[2], KEYS[3], now, tonumber(ARGV[1]), ARGV[2] == '1', ARGV[3],
             tonumber(ARGV[1]) / 2)
"""
)

# KEYS: schedule, held set, owners hash. ARGV: member, owner, lease ms, span ms. A
# waiter's check: renews its owner's lease, sweeps, and returns the ms until its slot
# (which may have moved forward). A held slot given away (its owner was taken for dead:
# a process frozen longer than its lease) is taken again at the end of the schedule.
HOLD = (
    _HELD
    + """
local now = now_ms()
renew(KEYS[3], ARGV[2], now, tonumber(ARGV[3]))
sweep(KEYS[1], KEYS[2], KEYS[3], now)
local at = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]))
if at == nil then
  at = tonumber(redis.call('GET', KEYS[1]) or '0')
  if at < now then at = now end
  local new_tat = at + tonumber(ARGV[4])
  redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 60000)
  redis.call('ZADD', KEYS[2], at, ARGV[1])
end
local wait = at - now
if wait < 0 then wait = 0 end
return string.format('%.3f', wait)
"""
)

# KEYS: schedule, held set, in-flight set, claim waiting set. ARGV: member, seq (-1:
# none). A waiter cancelled before its slot (or its claim): the slot is given back, the
# ones behind move forward.
RELEASE = (
    _HELD
    + """
local now = now_ms()
if ARGV[2] ~= '-1' then redis.call('ZREM', KEYS[3], ARGV[2]) end
redis.call('ZREM', KEYS[4], ARGV[1])
release(KEYS[1], KEYS[2], now, '-inf', function(m, owner) return m == ARGV[1] end)
return 1
"""
)

# KEYS[1]: schedule. ARGV: interval_ms, delta units (negative gives back).
ADJUST = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + tonumber(ARGV[2]) * tonumber(ARGV[1])
if new_tat < now then new_tat = now end
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 60000)
return 1
"""

# KEYS: credit hash, send counter, in-flight set, resets list. ARGV: seq, remaining,
# ms until the endpoint's window is empty again ("" if not reported). The room a
# response reported, less what was sent after its request and what was sent before it
# and is still on its way (neither counted by the endpoint yet, perhaps); what is sent
# after the report is taken off at reservation. A newer request's report replaces an
# older one; seq -1 forgets the room (after a 429) until a request sent later reports.
# Each report's reset is kept too (the last 8), as in the local limiter: from then on
# the endpoint's full capacity (the most it ever said it had room for, plus one), less
# those same others, is free again. Returns {the send count, the resets kept before this
# report ("at|full|mark|base")...}, for judging whether they kept their word.
CREDIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local cseq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '-1')
local seq = tonumber(ARGV[1])
local sent = tonumber(redis.call('GET', KEYS[2]) or '0')
local before = redis.call('LRANGE', KEYS[4], 0, -1)
if seq < 0 then
  redis.call('HSET', KEYS[1], 'seq', sent - 1, 'base', 0, 'mark', sent)
  redis.call('DEL', KEYS[4])
else
  local remaining = tonumber(ARGV[2])
  local cap = tonumber(redis.call('HGET', KEYS[1], 'cap') or '0')
  if remaining + 1 > cap then
    cap = remaining + 1
    redis.call('HSET', KEYS[1], 'cap', cap)
  end
  if seq > cseq then
    local others = (sent - seq - 1) + redis.call('ZCOUNT', KEYS[3], '-inf', '(' .. seq)
    local base = remaining - others
    redis.call('HSET', KEYS[1], 'seq', seq, 'base', base, 'mark', sent)
    if ARGV[3] ~= '' then
      local full = math.max(base, cap - others)
      local at = now + tonumber(ARGV[3])
      redis.call('RPUSH', KEYS[4], string.format('%.3f|%.3f|%d|%.3f', at, full, sent, base))
      redis.call('LTRIM', KEYS[4], -8, -1)
      redis.call('PEXPIRE', KEYS[4], 3600000)
    end
  end
end
redis.call('PEXPIRE', KEYS[1], 3600000)
table.insert(before, 1, tostring(sent))
return before
"""

# KEYS[1]: in-flight set. ARGV[1]: the seq of a request that is done.
DONE = """
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
"""

# KEYS[1]: pause key. ARGV: pause ms. Extends, never shortens. Returns ms left.
PAUSE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local untl = now + tonumber(ARGV[1])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur > untl then untl = cur end
redis.call('SET', KEYS[1], string.format('%.3f', untl), 'PX', math.ceil(untl - now) + 1000)
return string.format('%.3f', untl - now)
"""

# KEYS[1]: pause key. Returns ms left of the shared pause (0 if none).
PAUSE_LEFT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local left = cur - now
if left < 0 then left = 0 end
return string.format('%.3f', left)
"""
