-- KEYS[1]: the writer key; ARGV[1]: the token (a writer's, a reader's, or
-- "i:" and a waiting writer's intent id); ARGV[2]: the release id to
-- publish ("": publish nothing, count the subscribers). Removes what the
-- token holds; answers 0 when it held nothing (an intent: always 1), else
-- 1 + the subscribers reached, as release.lua.
-- Writes after TIME need effects replication on Redis < 5 (a no-op since).
if redis.replicate_commands then
	redis.replicate_commands()
end
local base = string.sub(KEYS[1], 1, -3)
local rk, ik = base .. ":r", base .. ":i"
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function fit(k)
	local last = redis.call("ZRANGE", k, -1, -1, "WITHSCORES")
	if last[2] then
		redis.call("PEXPIREAT", k, last[2])
	end
end
redis.call("ZREMRANGEBYSCORE", rk, "-inf", now)
redis.call("ZREMRANGEBYSCORE", ik, "-inf", now)
if string.sub(ARGV[1], 1, 2) == "i:" then
	if redis.call("ZREM", ik, string.sub(ARGV[1], 3)) == 0 then
		return 1
	end
	fit(ik)
elseif redis.call("GET", KEYS[1]) == ARGV[1] then
	redis.call("DEL", KEYS[1])
elseif redis.call("ZREM", rk, ARGV[1]) == 1 then
	fit(rk)
else
	return 0
end
local channel = "liblock:released:" .. KEYS[1]
local n
if ARGV[2] == "" then
	n = redis.pcall("PUBSUB", "NUMSUB", channel)
	if type(n) == "table" then
		n = n[2]
	end
else
	n = redis.pcall("PUBLISH", channel, ARGV[2])
end
if type(n) == "number" then
	return 1 + n
end
return 1
