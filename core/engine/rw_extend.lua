-- KEYS[1]: the writer key; ARGV[1]: the token; ARGV[2]: the ttl (ms).
-- A writer's key, or a reader's unexpired member, gets its expiry raised to
-- at least the ttl (never lowered): 1; not held: 0.
-- Writes after TIME need effects replication on Redis < 5 (a no-op since).
if redis.replicate_commands then
	redis.replicate_commands()
end
if redis.call("GET", KEYS[1]) == ARGV[1] then
	if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[2]) then
		redis.call("PEXPIRE", KEYS[1], ARGV[2])
	end
	return 1
end
local rk = string.sub(KEYS[1], 1, -3) .. ":r"
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call("ZSCORE", rk, ARGV[1])
if not s or tonumber(s) <= now then
	return 0
end
local e = now + tonumber(ARGV[2])
if e > tonumber(s) then
	redis.call("ZADD", rk, string.format("%.0f", e), ARGV[1])
	local last = redis.call("ZRANGE", rk, -1, -1, "WITHSCORES")
	redis.call("PEXPIREAT", rk, last[2])
end
return 1
