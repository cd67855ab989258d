if redis.call("GET", KEYS[1]) == ARGV[1] then
	redis.call("DEL", KEYS[1])
	local n = redis.pcall("PUBLISH", "liblock:released:" .. KEYS[1], ARGV[2])
	if type(n) == "number" then
		return 1 + n
	end
	return 1
end
return 0
