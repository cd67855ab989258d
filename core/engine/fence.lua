if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
local cur = tonumber(redis.call("GET", KEYS[2]) or "0")
local fence = tonumber(ARGV[2])
if fence < cur then
	return -1
end
if fence > cur then
	redis.call("SET", KEYS[2], ARGV[2])
end
return 1
