if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
local cur = tonumber(redis.call("GET", KEYS[2]) or "0")
local term = tonumber(ARGV[2])
if term < cur then
	return -1
end
if term > cur then
	redis.call("SET", KEYS[2], ARGV[2])
end
local pttl = redis.call("PTTL", KEYS[1])
if pttl > 0 then
	redis.call("SET", KEYS[1], ARGV[1] .. "\255" .. ARGV[2], "PX", pttl)
end
redis.pcall("PUBLISH", "liblock:leader:" .. KEYS[1], ARGV[2])
return 1
