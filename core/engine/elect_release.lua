local v = redis.call("GET", KEYS[1])
if v == ARGV[1] or (v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. "\255") then
	redis.call("DEL", KEYS[1])
	if v ~= ARGV[1] then
		redis.pcall("PUBLISH", "liblock:leader:" .. KEYS[1], "0")
	end
	local channel = "liblock:released:" .. KEYS[1]
	local n
	if ARGV[2] == "" then
		n = redis.pcall("PUBSUB", "NUMSUB", channel)
		if type(n) == "table" then
			n = n[2]
		end
	else
		n = redis.pcall("PUBLISH", channel, ARGV[2])
	end
	if type(n) == "number" then
		return 1 + n
	end
	return 1
end
return 0
