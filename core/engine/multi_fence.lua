local n = #KEYS / 2
local fence = tonumber(ARGV[2])
for i = 1, n do
	if redis.call("GET", KEYS[i]) ~= ARGV[1] then
		return 0
	end
	if tonumber(redis.call("GET", KEYS[n + i]) or "0") > fence then
		return -1
	end
end
for i = 1, n do
	if tonumber(redis.call("GET", KEYS[n + i]) or "0") < fence then
		redis.call("SET", KEYS[n + i], ARGV[2])
	end
end
return 1
