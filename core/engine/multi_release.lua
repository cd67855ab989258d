local all = 1
for i = 1, #KEYS do
	if redis.call("GET", KEYS[i]) == ARGV[1] then
		redis.call("DEL", KEYS[i])
		redis.pcall("PUBLISH", "liblock:released:" .. KEYS[i], ARGV[2])
	else
		all = 0
	end
end
return all
