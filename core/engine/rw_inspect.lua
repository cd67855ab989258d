-- KEYS[1]: the writer key. Answers {the writer's token or false, its PTTL,
-- {reader token, ms left, ...} of the unexpired readers}.
local rk = string.sub(KEYS[1], 1, -3) .. ":r"
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rs = redis.call("ZRANGEBYSCORE", rk, "(" .. string.format("%.0f", now), "+inf", "WITHSCORES")
local out = {}
for i = 1, #rs, 2 do
	out[#out + 1] = rs[i]
	out[#out + 1] = tonumber(rs[i + 1]) - now
end
return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1]), out}
