local n = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local fence = 0
if KEYS[2] then
	-- Fenced: the counter, at least the clock floor (TIME in microseconds,
	-- fence.go). Writes after TIME need effects replication on Redis < 5
	-- (a no-op since).
	if redis.replicate_commands then
		redis.replicate_commands()
	end
	local t = redis.call("TIME")
	fence = math.max(tonumber(redis.call("GET", KEYS[2]) or "0"), tonumber(t[1]) * 1000000 + tonumber(t[2]))
end
if ARGV[5] == "1" then
	for i = 0, n - 1 do
		local k = KEYS[1] .. ":" .. i
		if redis.call("GET", k) == ARGV[1] then
			if redis.call("PTTL", k) < tonumber(ARGV[2]) then
				redis.call("PEXPIRE", k, ARGV[2])
			end
			return {i, 2, fence}
		end
	end
end
local take = -1
local free = {}
if redis.call("EXISTS", KEYS[1] .. ":" .. want) == 0 then
	take = want
else
	for i = 0, n - 1 do
		if redis.call("EXISTS", KEYS[1] .. ":" .. i) == 0 then
			if take < 0 then
				take = i
			end
			free[#free + 1] = i
			if #free >= 16 then
				break
			end
		end
	end
end
if take < 0 then
	return {-1, 0, fence}
end
redis.call("SET", KEYS[1] .. ":" .. take, ARGV[1], "PX", ARGV[2])
local r = {take, 1, fence}
for _, i in ipairs(free) do
	r[#r + 1] = i
end
return r
