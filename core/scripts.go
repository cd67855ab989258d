package core

import (
	"context"
	"strconv"
	"time"
)

// script is a Lua script run with EVALSHA, falling back to EVAL on the
// nodes that answer NOSCRIPT (which also caches it there for next time).
type script struct {
	src, sha string
}

func newScript(src string) script {
	return script{src: src, sha: scriptSHA1(src)}
}

var (
	// releaseScript deletes the key only while it still holds our token.
	releaseScript = newScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)
	// extendScript resets the expiry only while the key holds our token; it
	// never creates the key, so an expired lock cannot be re-acquired here.
	extendScript = newScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

// run sends the script to the nodes where send[i] is true and returns one
// reply per node (zero Reply where not sent).
func (s script) run(ctx context.Context, t Transport, send []bool, key string, args ...string) []Reply {
	cmds := make([]Command, len(send))
	for i, ok := range send {
		if ok {
			cmds[i] = append(Command{"EVALSHA", s.sha, "1", key}, args...)
		}
	}
	replies := t.Exec(ctx, cmds)
	var retry []Command
	for i, r := range replies {
		if isNoScript(r.Err) {
			if retry == nil {
				retry = make([]Command, len(cmds))
			}
			retry[i] = append(Command{"EVAL", s.src, "1", key}, args...)
		}
	}
	if retry != nil {
		for i, r := range t.Exec(ctx, retry) {
			if retry[i] != nil {
				replies[i] = r
			}
		}
	}
	return replies
}

func setNXCommand(key, token string, ttl time.Duration) Command {
	return Command{"SET", key, token, "NX", "PX", strconv.FormatInt(ttl.Milliseconds(), 10)}
}
