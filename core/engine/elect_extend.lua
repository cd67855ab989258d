local v = redis.call("GET", KEYS[1])
if v == ARGV[1] or (v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. "\255") then
	if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[2]) then
		redis.call("PEXPIRE", KEYS[1], ARGV[2])
	end
	return 1
end
return 0
