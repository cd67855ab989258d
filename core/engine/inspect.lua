return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1])}
