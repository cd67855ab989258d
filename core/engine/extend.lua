if redis.call("GET", KEYS[1]) == ARGV[1] then
	if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[2]) then
		redis.call("PEXPIRE", KEYS[1], ARGV[2])
	end
	return 1
end
return 0
