-- KEYS[1]: the writer key; ARGV[1]: the token; ARGV[2]: the fence. While
-- the token holds the lock here (the writer key, or an unexpired reader
-- member), raise the fence counter to the fence: 1, or -1 when it is
-- already higher; 0 without the token.
-- Writes after TIME need effects replication on Redis < 5 (a no-op since).
if redis.replicate_commands then
	redis.replicate_commands()
end
local base = string.sub(KEYS[1], 1, -3)
local fk = base .. "\255fence"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	local t = redis.call("TIME")
	local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
	local s = redis.call("ZSCORE", base .. ":r", ARGV[1])
	if not s or tonumber(s) <= now then
		return 0
	end
end
local cur = tonumber(redis.call("GET", fk) or "0")
local want = tonumber(ARGV[2])
if want < cur then
	return -1
end
if want > cur then
	redis.call("SET", fk, ARGV[2])
end
return 1
