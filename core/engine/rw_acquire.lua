-- KEYS[1]: the writer key (name 0xFF "rw:w"); the readers (":r"), intents
-- (":i") and fence counter (0xFF "fence") keys derive from it.
-- ARGV[1]: the attempt's token; ARGV[2]: "r <ttl ms>" or
-- "w <ttl ms> <intent ttl ms> <intent id>" (no intent: "w <ttl ms> 0 -").
-- Answers the fence counter when granted (or the clock floor, TIME in
-- microseconds, when that is higher: fence.go); -1: a writer holds it; -2:
-- readers (or, for a reader, a waiting writer's intent) hold it; -3: as
-- -2, and the writer's intent is left.
-- Writes after TIME need effects replication on Redis < 5 (a no-op since).
if redis.replicate_commands then
	redis.replicate_commands()
end
local base = string.sub(KEYS[1], 1, -3)
local rk, ik, fk = base .. ":r", base .. ":i", base .. "\255fence"
local mode, ttl, ittl, iid = string.match(ARGV[2], "^(%a) (%d+) ?(%d*) ?(%S*)$")
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
if redis.call("EXISTS", KEYS[1]) == 1 then
	return -1
end
if mode == "r" then
	if redis.call("EXISTS", ik) == 1 then
		return -2
	end
	redis.call("ZADD", rk, string.format("%.0f", now + tonumber(ttl)), ARGV[1])
	fit(rk)
else
	if redis.call("EXISTS", rk) == 1 then
		if iid ~= "-" then
			redis.call("ZADD", ik, string.format("%.0f", now + tonumber(ittl)), iid)
			fit(ik)
			return -3
		end
		return -2
	end
	redis.call("SET", KEYS[1], ARGV[1], "PX", ttl)
	if iid ~= "-" and redis.call("ZREM", ik, iid) == 1 then
		fit(ik)
	end
end
return math.max(tonumber(redis.call("GET", fk) or "0"), tonumber(t[1]) * 1000000 + tonumber(t[2]))
