local r = {}
for i = 0, tonumber(ARGV[1]) - 1 do
	local k = KEYS[1] .. ":" .. i
	r[#r + 1] = redis.call("GET", k)
	r[#r + 1] = redis.call("PTTL", k)
end
return r
