if ARGV[5] == "1" then
	local k = KEYS[1] .. ":" .. ARGV[4]
	if redis.call("GET", k) ~= ARGV[1] then
		return 0
	end
	redis.call("DEL", k)
else
	local n = tonumber(ARGV[3])
	local slot = tonumber(ARGV[4])
	local found = false
	for i = 0, n - 1 do
		if i ~= slot then
			local k = KEYS[1] .. ":" .. i
			if redis.call("GET", k) == ARGV[1] then
				redis.call("DEL", k)
				found = true
			end
		end
	end
	if not found then
		return 0
	end
end
local channel = "liblock:released:" .. KEYS[1]
local c
if ARGV[2] == "" then
	c = redis.pcall("PUBSUB", "NUMSUB", channel)
	if type(c) == "table" then
		c = c[2]
	end
else
	c = redis.pcall("PUBLISH", channel, ARGV[2])
end
if type(c) == "number" then
	return 1 + c
end
return 1
