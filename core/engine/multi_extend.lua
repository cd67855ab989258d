for i = 1, #KEYS do
	if redis.call("GET", KEYS[i]) ~= ARGV[1] then
		return 0
	end
end
for i = 1, #KEYS do
	if redis.call("PTTL", KEYS[i]) < tonumber(ARGV[2]) then
		redis.call("PEXPIRE", KEYS[i], ARGV[2])
	end
end
return 1
