local n = tonumber(ARGV[3])
for i = 1, n do
	if redis.call("EXISTS", KEYS[i]) == 1 then
		return -i
	end
end
local fence = 0
if KEYS[n + 1] then
	-- Fenced: the highest counter, at least the clock floor (TIME in
	-- microseconds, fence.go). Writes after TIME need effects replication
	-- on Redis < 5 (a no-op since).
	if redis.replicate_commands then
		redis.replicate_commands()
	end
	local t = redis.call("TIME")
	fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
for i = 1, n do
	redis.call("SET", KEYS[i], ARGV[1], "PX", ARGV[2])
	if KEYS[n + i] then
		fence = math.max(fence, tonumber(redis.call("GET", KEYS[n + i]) or "0"))
	end
end
return fence
