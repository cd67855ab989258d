local n = tonumber(ARGV[3])
for i = 1, n do
	if redis.call("EXISTS", KEYS[i]) == 1 then
		return -i
	end
end
local fence = 0
for i = 1, n do
	redis.call("SET", KEYS[i], ARGV[1], "PX", ARGV[2])
	if KEYS[n + i] then
		fence = math.max(fence, tonumber(redis.call("GET", KEYS[n + i]) or "0"))
	end
end
return fence
