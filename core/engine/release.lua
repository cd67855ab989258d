if redis.call("GET", KEYS[1]) == ARGV[1] then
	redis.call("DEL", KEYS[1])
	redis.pcall("PUBLISH", "liblock:released:" .. KEYS[1], ARGV[2])
	return 1
end
return 0
