if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return tonumber(redis.call("GET", KEYS[2]) or "0")
end
return -1
