package engine

// The simulation's model of a Redis master: a RESP2 reader of the commands
// the engine writes, a keyspace whose expiry follows the node's own
// (drifting) clock, a script cache, and the ways a node fails: down
// (connections refused or reset), frozen (connections accepted, nothing
// answered until it thaws, then everything buffered runs — including
// commands on connections the client closed long ago), restarted with or
// without its data.

import (
	"strconv"
	"strings"
	"time"
)

// simKey is one key on one node.
type simKey struct {
	val      string
	expireMs int64 // node-clock milliseconds; the key lives while nodeMs <= expireMs; -1: no expiry
	// Who wrote it last and when (true time), for the end-of-run check of
	// keys left behind.
	writer  int
	writeAt time.Duration
	// late: the write ran on a connection its client had already closed
	// (it raced a frozen node or a partition): the engine cannot know of it.
	late bool
	// afterRelease: a script set it with a token whose release (or
	// cleanup) had already run on this node: its EVALSHA met NOSCRIPT
	// and the engine's EVAL fallback overtook the release sent after it
	// (simbugs_test.go, TestSimBugNoscriptOvertakesCleanup).
	afterRelease bool
	// members: a sorted set's members (sim_rwlock_test.go), each with its
	// score as expireMs and its own writer, for the check of leftovers.
	members map[string]*simKey
}

// Script cache bits.
const (
	scriptRelease = 1 << iota
	scriptExtend
	scriptAcquireToken
	scriptAcquireFence
	scriptFence
	scriptInspect
)

type simNode struct {
	s      *sim
	idx    int
	clock  simClock
	spec   Node
	up     bool
	frozen bool
	// dbs: the keyspace by database; a crash keeps it or not (with or
	// without appendfsync always).
	dbs     map[int]map[string]*simKey
	scripts uint32
	backlog []nodeItem // arrived while frozen, run at thaw in arrival order
	conns   []*simConn // connections the node holds open
	// restartAt: when a node that is down comes back (true time).
	restartAt time.Duration
	freezeGen uint64   // a thaw is for the freeze of its generation only
	args      [][]byte // scratch
	// loadingUntil: after a restart that keeps the data, the node answers
	// LOADING to data commands until then (true time), as Redis does while
	// it reads its dataset back.
	loadingUntil time.Duration
	// wallOff: how far the node's wall clock (TIME) is ahead of true time.
	// Expiry runs on clock, whose rate drifts (the worst case over one
	// ttl); TIME is the server's wall clock as NTP keeps it: within a
	// bounded offset of true time, never stepped back.
	wallOff time.Duration
}

// nodeItem is something that arrived at a frozen node: bytes, or the
// client's FIN (data == nil).
type nodeItem struct {
	c    *simConn
	data []byte
}

func (n *simNode) ms() int64 { return int64(n.clock.at(n.s.now) / time.Millisecond) }

// simEpochUs is the wall clock's reading at the simulation's start, in
// microseconds since the Unix epoch (late 2026), as TIME would give it.
const simEpochUs = 1_795_000_000_000_000

// timeUs is TIME in microseconds: the node's wall clock.
func (n *simNode) timeUs() int64 { return simEpochUs + int64((n.s.now+n.wallOff)/time.Microsecond) }

// fenceFloor is what a first-round script answers at least for a fence
// counter: the node's TIME in microseconds (acquire_fence.lua and the
// other acquire scripts; fence.go); 0 in the control that models the
// scripts without it.
func (n *simNode) fenceFloor() int64 {
	if n.s.cfg.noFloor {
		return 0
	}
	return n.timeUs()
}

func (n *simNode) db(i int) map[string]*simKey {
	d := n.dbs[i]
	if d == nil {
		d = map[string]*simKey{}
		n.dbs[i] = d
	}
	return d
}

// lookup returns the live key, expiring it (lazily, as Redis does on
// access) when its time has passed.
func (n *simNode) lookup(db map[string]*simKey, key []byte) *simKey {
	k := db[string(key)]
	if k == nil {
		return nil
	}
	if k.expireMs >= 0 && n.ms() > k.expireMs {
		delete(db, string(key))
		return nil
	}
	return k
}

// accept takes a new connection (the kernel does it even when the process
// is frozen).
func (n *simNode) accept(c *simConn) {
	c.atNode = true
	n.conns = append(n.conns, c)
}

func (n *simNode) forget(c *simConn) {
	c.atNode = false
	for i, x := range n.conns {
		if x == c {
			n.conns = append(n.conns[:i], n.conns[i+1:]...)
			return
		}
	}
}

// arrive handles bytes (or a FIN, data == nil) that reached the node.
func (n *simNode) arrive(c *simConn, data []byte) {
	if !c.atNode || c.reset {
		n.s.putBuf(data)
		return // the node no longer knows this connection
	}
	if n.frozen {
		n.backlog = append(n.backlog, nodeItem{c: c, data: data})
		return
	}
	n.process(c, data)
}

func (n *simNode) process(c *simConn, data []byte) {
	if data == nil { // FIN: what was before it has been run
		n.forget(c)
		return
	}
	buf := data
	if len(c.inbuf) > 0 {
		c.inbuf = append(c.inbuf, data...)
		buf = c.inbuf
	}
	out := n.s.getBuf()
	replies := 0
	for {
		args, k, ok := parseCommand(buf, n.args)
		n.args = args
		if !ok {
			n.s.violate("protocol", "node %d: unparsable bytes from client %d: %q", n.idx, c.client.id, buf)
			n.resetConn(c)
			return
		}
		if k == 0 {
			break
		}
		before := len(out)
		out = n.exec(c, args, out)
		if n.s.trace != nil {
			n.s.tracef("n%d (clock %v) runs c%d conn %d%s: %q -> %q", n.idx, n.clock.at(n.s.now), c.client.id, c.id,
				map[bool]string{true: " (closed by its client)"}[c.clientClosed], traceCmd(buf[:k]), out[before:])
		}
		replies++
		buf = buf[k:]
	}
	// Keep what is left of a command cut in two (a copy: data is recycled).
	c.inbuf = append(c.inbuf[:0], buf...)
	n.s.putBuf(data)
	if replies > 0 {
		n.s.toClient(c, out, replies)
	} else {
		n.s.putBuf(out)
	}
}

// thaw runs what arrived while the node was frozen.
func (n *simNode) thaw() {
	n.frozen = false
	b := n.backlog
	n.backlog = nil
	for _, it := range b {
		if it.c.atNode && !it.c.reset && n.up {
			n.process(it.c, it.data)
		}
	}
}

// crash stops the node: every connection is reset, what was buffered is
// lost, and without persistence so is the keyspace.
func (n *simNode) crash(persistent bool) {
	n.up, n.frozen = false, false
	n.backlog = nil
	for len(n.conns) > 0 {
		n.resetConn(n.conns[0])
	}
	n.scripts = 0 // the script cache is never persisted
	if !persistent {
		n.dbs = map[int]map[string]*simKey{} // fence counters too
		if n.s.cfg.restartNow || n.s.cfg.noFloor {
			// A loss fences may not survive: a restart at once, or the
			// counters alone without the clock floor. After a delayed
			// restart the floor keeps them increasing (fence.go): no
			// excuse then.
			n.s.chk.losses = append(n.s.chk.losses, n.s.now)
		}
	}
}

// resetConn closes a connection from the node's side: the client sees a
// reset after what was already sent to it.
func (n *simNode) resetConn(c *simConn) {
	n.forget(c)
	c.reset = true
	c.inbuf = nil
	n.s.resetToClient(c)
}

// exec runs one command and appends its reply.
func (n *simNode) exec(c *simConn, args [][]byte, out []byte) []byte {
	if len(args) == 0 {
		return append(out, "-ERR empty command\r\n"...)
	}
	name := upper(args[0])
	if n.spec.Password != "" && !c.authed && name != "AUTH" {
		return append(out, "-NOAUTH Authentication required.\r\n"...)
	}
	switch name {
	case "SET", "GET", "DEL", "PEXPIRE", "EVALSHA", "EVAL":
		if n.s.now < n.loadingUntil {
			// The client's delete of a key restored from disk may be
			// refused here until its ttl: an exchange that failed.
			c.client.trouble[n.idx] = n.s.now
			return append(out, "-LOADING Redis is loading the dataset in memory\r\n"...)
		}
	}
	switch name {
	case "PING":
		return append(out, "+PONG\r\n"...)
	case "AUTH":
		user, pass := "default", ""
		switch len(args) {
		case 2:
			pass = string(args[1])
		case 3:
			user, pass = string(args[1]), string(args[2])
		default:
			return append(out, "-ERR wrong number of arguments for 'auth' command\r\n"...)
		}
		want := n.spec.Username
		if want == "" {
			want = "default"
		}
		if n.spec.Password == "" || user != want || pass != n.spec.Password {
			return append(out, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"...)
		}
		c.authed = true
		return append(out, "+OK\r\n"...)
	case "SELECT":
		if len(args) != 2 {
			return append(out, "-ERR wrong number of arguments for 'select' command\r\n"...)
		}
		db, err := strconv.Atoi(string(args[1]))
		if err != nil || db < 0 || db > 15 {
			return append(out, "-ERR DB index is out of range\r\n"...)
		}
		c.db = db
		return append(out, "+OK\r\n"...)
	case "CLIENT":
		if len(args) == 3 && upper(args[1]) == "SETNAME" {
			c.name = string(args[2])
			return append(out, "+OK\r\n"...)
		}
		return append(out, "-ERR unknown subcommand\r\n"...)
	case "SET":
		return n.set(c, args, out)
	case "GET":
		if len(args) != 2 {
			return append(out, "-ERR wrong number of arguments for 'get' command\r\n"...)
		}
		if k := n.lookup(n.db(c.db), args[1]); k != nil {
			return simAppendBulk(out, k.val)
		}
		return append(out, "$-1\r\n"...)
	case "DEL":
		db := n.db(c.db)
		cnt := 0
		for _, key := range args[1:] {
			if n.lookup(db, key) != nil {
				delete(db, string(key))
				cnt++
			}
		}
		return appendInt(out, int64(cnt))
	case "PEXPIRE":
		if len(args) != 3 {
			return append(out, "-ERR wrong number of arguments for 'pexpire' command\r\n"...)
		}
		ms, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil {
			return append(out, "-ERR value is not an integer or out of range\r\n"...)
		}
		return appendInt(out, n.pexpire(c, args[1], ms))
	case "EVALSHA", "EVAL":
		return n.eval(c, name, args, out)
	case "SUBSCRIBE", "UNSUBSCRIBE":
		// One confirmation per channel; the connection then gets the
		// channel's messages (RESP2 pub/sub mode).
		kind := strings.ToLower(name)
		for _, ch := range args[1:] {
			if c.chans == nil {
				c.chans = map[string]bool{}
			}
			if name == "SUBSCRIBE" {
				c.chans[string(ch)] = true
			} else {
				delete(c.chans, string(ch))
			}
			out = append(out, "*3\r\n"...)
			out = simAppendBulk(out, kind)
			out = simAppendBulk(out, string(ch))
			out = appendInt(out, int64(len(c.chans)))
		}
		return out
	}
	return append(out, "-ERR unknown command '"+string(args[0])+"'\r\n"...)
}

// upper returns the upper-case form of a command name; the names the engine
// sends come back as constants, without allocating.
func upper(b []byte) string {
	switch string(b) {
	case "SET", "set":
		return "SET"
	case "EVALSHA", "evalsha":
		return "EVALSHA"
	case "EVAL", "eval":
		return "EVAL"
	case "PING", "ping":
		return "PING"
	case "NX", "nx":
		return "NX"
	case "PX", "px":
		return "PX"
	}
	return strings.ToUpper(string(b))
}

func (n *simNode) set(c *simConn, args [][]byte, out []byte) []byte {
	if len(args) < 3 {
		return append(out, "-ERR wrong number of arguments for 'set' command\r\n"...)
	}
	nx := false
	px := int64(-1)
	for i := 3; i < len(args); i++ {
		switch upper(args[i]) {
		case "NX":
			nx = true
		case "PX":
			if i+1 >= len(args) {
				return append(out, "-ERR syntax error\r\n"...)
			}
			v, err := strconv.ParseInt(string(args[i+1]), 10, 64)
			if err != nil || v <= 0 {
				return append(out, "-ERR invalid expire time in 'set' command\r\n"...)
			}
			px = v
			i++
		default:
			return append(out, "-ERR syntax error\r\n"...)
		}
	}
	db := n.db(c.db)
	if nx && n.lookup(db, args[1]) != nil {
		return append(out, "$-1\r\n"...)
	}
	k := &simKey{val: string(args[2]), expireMs: -1}
	if px > 0 {
		k.expireMs = n.ms() + px
	}
	n.wrote(c, k)
	db[string(args[1])] = k
	return append(out, "+OK\r\n"...)
}

func (n *simNode) wrote(c *simConn, k *simKey) {
	k.writer, k.writeAt, k.late = c.client.id, n.s.now, c.clientClosed
}

func (n *simNode) pexpire(c *simConn, key []byte, ms int64) int64 {
	db := n.db(c.db)
	k := n.lookup(db, key)
	if k == nil {
		return 0
	}
	if ms <= 0 {
		delete(db, string(key))
		return 1
	}
	k.expireMs = n.ms() + ms
	n.wrote(c, k)
	return 1
}

// simScript is one script the model node knows. keys < 0: any number of
// keys; run, when set, runs it (a primitive's scripts, registered from its
// own file), else eval's switch does.
type simScript struct {
	bit      uint32
	src, sha string
	keys     int
	args     int
	name     string
	run      func(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte
}

// The model's scripts: each runs exactly as its Lua file does (see
// scripts.go and *.lua), with the number of keys it takes.
var simScripts = []simScript{
	{scriptRelease, releaseSrc, ReleaseSHA, 1, 2, "release", nil},
	{scriptExtend, extendSrc, ExtendSHA, 1, 2, "extend", nil},
	{scriptAcquireToken, acquireTokenSrc, AcquireTokenSHA, 1, 2, "acquire_token", nil},
	{scriptAcquireFence, acquireFenceSrc, AcquireFenceSHA, 2, 2, "acquire_fence", nil},
	{scriptFence, fenceSrc, FenceSHA, 2, 2, "fence", nil},
	{scriptInspect, inspectSrc, InspectSHA, 1, 0, "inspect", nil},
}

// eval runs the engine's scripts, by sum (EVALSHA, NOSCRIPT until the node
// has seen the source) or by source (EVAL, which caches it).
func (n *simNode) eval(c *simConn, name string, args [][]byte, out []byte) []byte {
	if len(args) < 3 {
		return append(out, "-ERR wrong number of arguments for '"+strings.ToLower(name)+"' command\r\n"...)
	}
	sc := -1
	for i := range simScripts {
		if name == "EVALSHA" && string(args[1]) == simScripts[i].sha || name == "EVAL" && string(args[1]) == simScripts[i].src {
			sc = i
			break
		}
	}
	if sc < 0 {
		if name == "EVALSHA" {
			return append(out, "-NOSCRIPT No matching script. Please use EVAL.\r\n"...)
		}
		return append(out, "-ERR the model node knows only liblock's scripts\r\n"...)
	}
	spec := &simScripts[sc]
	if name == "EVALSHA" && n.scripts&spec.bit == 0 {
		return append(out, "-NOSCRIPT No matching script. Please use EVAL.\r\n"...)
	}
	n.scripts |= spec.bit
	// The engine must pass the keys and arguments the script reads: with
	// another split, KEYS and ARGV would shift and the Lua would misbehave.
	nkeys := spec.keys
	if nkeys < 0 {
		if v, err := strconv.Atoi(string(args[2])); err == nil && v > 0 {
			nkeys = v
		}
	}
	if string(args[2]) != strconv.Itoa(nkeys) || len(args) != 3+nkeys+spec.args {
		n.s.violate("protocol", "node %d: %s script called with numkeys %s and %d arguments", n.idx, spec.name, args[2], len(args)-3)
		return append(out, "-ERR Error running script: wrong keys or arguments\r\n"...)
	}
	rest := args[3:]
	if spec.run != nil {
		return spec.run(n, c, rest[:nkeys], rest[nkeys:], out)
	}
	db := n.db(c.db)
	switch spec.bit {
	case scriptRelease: // if GET == token then DEL and PUBLISH the release id (none: count subscribers)
		c.relToks[c.relNext%4] = string(rest[1])
		c.relNext++
		if k := n.lookup(db, rest[0]); k != nil && k.val == string(rest[1]) {
			delete(db, string(rest[0]))
			return appendInt(out, 1+n.publish(ReleasedChannel(string(rest[0])), string(rest[2])))
		}
		return appendInt(out, 0)
	case scriptExtend: // if GET == token then raise the PTTL to at least ms
		ms, err := strconv.ParseInt(string(rest[2]), 10, 64)
		if err != nil {
			return append(out, "-ERR Error running script: bad ms\r\n"...)
		}
		if k := n.lookup(db, rest[0]); k != nil && k.val == string(rest[1]) {
			if n.pttl(k) < ms {
				n.pexpire(c, rest[0], ms)
			}
			return appendInt(out, 1)
		}
		return appendInt(out, 0)
	case scriptAcquireToken:
		// GET; our token: raise PTTL to at least ttl, 2; another's: 0;
		// none: SET PX, 1.
		ms, err := strconv.ParseInt(string(rest[2]), 10, 64)
		if err != nil || ms <= 0 {
			return append(out, "-ERR Error running script: bad ms\r\n"...)
		}
		k := n.lookup(db, rest[0])
		switch {
		case k != nil && k.val == string(rest[1]):
			if n.pttl(k) < ms {
				n.pexpire(c, rest[0], ms)
			}
			return appendInt(out, 2)
		case k != nil:
			return appendInt(out, 0)
		}
		k = &simKey{val: string(rest[1]), expireMs: n.ms() + ms}
		n.wrote(c, k)
		k.afterRelease = c.releasedHere(rest[1])
		db[string(rest[0])] = k
		return appendInt(out, 1)
	case scriptAcquireFence:
		// SET NX PX; then the counter (0 when there is none) or the clock
		// floor, whichever is higher; else -1.
		ms, err := strconv.ParseInt(string(rest[3]), 10, 64)
		if err != nil || ms <= 0 {
			return append(out, "-ERR Error running script: bad ms\r\n"...)
		}
		if n.lookup(db, rest[0]) != nil {
			return appendInt(out, -1)
		}
		k := &simKey{val: string(rest[2]), expireMs: n.ms() + ms}
		n.wrote(c, k)
		k.afterRelease = c.releasedHere(rest[2])
		db[string(rest[0])] = k
		cur, ok := n.counter(db, rest[1])
		if !ok {
			return append(out, "$-1\r\n"...) // tonumber of a non-number: nil
		}
		return appendInt(out, max(cur, n.fenceFloor()))
	case scriptFence:
		// While the key holds the token: raise the counter to the fence
		// (1), or -1 when it is already higher; 0 without the token.
		if k := n.lookup(db, rest[0]); k == nil || k.val != string(rest[2]) {
			return appendInt(out, 0)
		}
		fence, err := strconv.ParseInt(string(rest[3]), 10, 64)
		if err != nil {
			return append(out, "-ERR Error running script: bad fence\r\n"...)
		}
		cur, ok := n.counter(db, rest[1])
		if !ok {
			return append(out, "-ERR Error running script: attempt to compare nil with number\r\n"...)
		}
		if fence < cur {
			return appendInt(out, -1)
		}
		if fence > cur {
			k := &simKey{val: string(rest[3]), expireMs: -1}
			n.wrote(c, k)
			db[string(rest[1])] = k
		}
		return appendInt(out, 1)
	default: // inspect: {GET, PTTL}; a missing key is false (nil) and -2
		k := n.lookup(db, rest[0])
		out = append(out, "*2\r\n"...)
		if k == nil {
			out = append(out, "$-1\r\n"...)
			return appendInt(out, -2)
		}
		out = simAppendBulk(out, k.val)
		return appendInt(out, n.pttl(k))
	}
}

// releasedHere reports whether one of the last releases run on c was for
// token (tokens are unique per attempt; a caller's token is not, and then
// a later hand-over's legitimate set after a release may count too: those
// keys are excused as a caller's token's anyway).
func (c *simConn) releasedHere(token []byte) bool {
	for _, t := range c.relToks {
		if t == string(token) {
			return true
		}
	}
	return false
}

// pttl is PTTL of a live key: the milliseconds it has left, -1 without
// expiry.
func (n *simNode) pttl(k *simKey) int64 {
	if k.expireMs < 0 {
		return -1
	}
	return k.expireMs - n.ms()
}

// counter reads a fence counter as the scripts' tonumber(GET or "0") does;
// false for a value that is no number.
func (n *simNode) counter(db map[string]*simKey, key []byte) (int64, bool) {
	k := n.lookup(db, key)
	if k == nil {
		return 0, true
	}
	v, err := strconv.ParseInt(k.val, 10, 64)
	if err != nil {
		n.s.violate("harness", "node %d: fence counter %q holds %q", n.idx, key, k.val)
		return 0, false
	}
	return v, true
}

// isFenceKey reports a fence counter's key: permanent by design.
func isFenceKey(key string) bool { return strings.HasSuffix(key, FenceKey("")) }

// publish sends msg to channel's subscribers and counts them; an empty
// msg only counts them (PUBSUB NUMSUB).
func (n *simNode) publish(channel, msg string) int64 {
	var count int64
	for _, c := range n.conns {
		if c.chans[channel] && c.atNode && !c.reset {
			count++
			if msg == "" {
				continue
			}
			out := n.s.getBuf()
			out = append(out, "*3\r\n"...)
			out = simAppendBulk(out, "message")
			out = simAppendBulk(out, channel)
			out = simAppendBulk(out, msg)
			n.s.toClient(c, out, 0)
		}
	}
	return count
}

func appendInt(out []byte, v int64) []byte {
	out = append(out, ':')
	out = strconv.AppendInt(out, v, 10)
	return append(out, '\r', '\n')
}

func simAppendBulk(out []byte, s string) []byte {
	out = append(out, '$')
	out = strconv.AppendInt(out, int64(len(s)), 10)
	out = append(out, '\r', '\n')
	out = append(out, s...)
	return append(out, '\r', '\n')
}

// parseCommand reads one RESP2 command (an array of bulk strings) from the
// front of b: its arguments (appended to args, slices of b) and length,
// k == 0 when b holds only part of one, ok == false when b cannot be a
// command.
func parseCommand(b []byte, args [][]byte) (_ [][]byte, k int, ok bool) {
	args = args[:0]
	if len(b) == 0 {
		return args, 0, true
	}
	if b[0] != '*' {
		return args, 0, false
	}
	cnt, off, ok := respLen(b, 1)
	if !ok || off == 0 {
		return args, 0, ok
	}
	if cnt < 1 || cnt > 128 {
		return args, 0, false
	}
	for range cnt {
		if off >= len(b) {
			return args, 0, true
		}
		if b[off] != '$' {
			return args, 0, false
		}
		size, next, ok := respLen(b, off+1)
		if !ok || next == 0 {
			return args, 0, ok
		}
		if size < 0 || size > 1<<20 {
			return args, 0, false
		}
		end := next + size
		if end+2 > len(b) {
			return args, 0, true
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return args, 0, false
		}
		args = append(args, b[next:end])
		off = end + 2
	}
	return args, off, true
}

// respLen reads a decimal number and its CRLF starting at b[i]: the value
// and the offset after the CRLF (0 when incomplete).
func respLen(b []byte, i int) (v, next int, ok bool) {
	start := i
	for ; i < len(b); i++ {
		ch := b[i]
		if ch == '\r' {
			if i+1 >= len(b) {
				return 0, 0, true
			}
			if b[i+1] != '\n' || i == start {
				return 0, 0, false
			}
			return v, i + 2, true
		}
		if ch < '0' || ch > '9' || i-start > 9 {
			return 0, 0, false
		}
		v = v*10 + int(ch-'0')
	}
	return 0, 0, true
}

// countCommands counts the whole commands in an engine write; rest > 0
// when the write ends inside a command (the engine must not do that).
func countCommands(b []byte) (n int, rest int) {
	var scratch [8][]byte
	for len(b) > 0 {
		_, k, ok := parseCommand(b, scratch[:0])
		if !ok || k == 0 {
			return n, len(b)
		}
		n++
		b = b[k:]
	}
	return n, 0
}
