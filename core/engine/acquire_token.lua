local v = redis.call("GET", KEYS[1])
if v == ARGV[1] then
	if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[2]) then
		redis.call("PEXPIRE", KEYS[1], ARGV[2])
	end
	return 2
end
if v then
	return 0
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return 1
