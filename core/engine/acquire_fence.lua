-- KEYS[1]: the lock key; KEYS[2]: its fence counter; ARGV[1]: the token;
-- ARGV[2]: the ttl in ms. SET NX PX; once set, answer the counter, or the
-- server's clock in microseconds (TIME) when that is higher: the floor that
-- keeps fences increasing across nodes that restarted without their
-- counters (fence.go). -1: the key is held.
-- Writes before TIME need effects replication on Redis < 5 (a no-op since).
if redis.replicate_commands then
	redis.replicate_commands()
end
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	local t = redis.call("TIME")
	return math.max(tonumber(redis.call("GET", KEYS[2]) or "0"), tonumber(t[1]) * 1000000 + tonumber(t[2]))
end
return -1
