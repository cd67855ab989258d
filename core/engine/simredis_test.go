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
}

// Script cache bits.
const (
	scriptRelease = 1 << iota
	scriptExtend
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
	scripts uint8
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
}

// nodeItem is something that arrived at a frozen node: bytes, or the
// client's FIN (data == nil).
type nodeItem struct {
	c    *simConn
	data []byte
}

func (n *simNode) ms() int64 { return int64(n.clock.at(n.s.now) / time.Millisecond) }

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
		n.dbs = map[int]map[string]*simKey{}
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

// eval runs the engine's two scripts, by sum (EVALSHA, NOSCRIPT until the
// node has seen the source) or by source (EVAL, which caches it).
func (n *simNode) eval(c *simConn, name string, args [][]byte, out []byte) []byte {
	if len(args) < 3 {
		return append(out, "-ERR wrong number of arguments for '"+strings.ToLower(name)+"' command\r\n"...)
	}
	var which uint8
	if name == "EVALSHA" {
		switch string(args[1]) {
		case ReleaseSHA:
			which = scriptRelease
		case ExtendSHA:
			which = scriptExtend
		}
		if which == 0 || n.scripts&which == 0 {
			return append(out, "-NOSCRIPT No matching script. Please use EVAL.\r\n"...)
		}
	} else {
		switch string(args[1]) {
		case releaseSrc:
			which = scriptRelease
		case extendSrc:
			which = scriptExtend
		default:
			return append(out, "-ERR the model node knows only liblock's two scripts\r\n"...)
		}
		n.scripts |= which
	}
	if string(args[2]) != "1" {
		return append(out, "-ERR the scripts take exactly one key\r\n"...)
	}
	rest := args[3:]
	db := n.db(c.db)
	switch which {
	case scriptRelease: // if GET == token then DEL and PUBLISH the release id
		if len(rest) != 3 {
			return append(out, "-ERR release: want key, token and release id\r\n"...)
		}
		if k := n.lookup(db, rest[0]); k != nil && k.val == string(rest[1]) {
			delete(db, string(rest[0]))
			n.publish(ReleasedChannel(string(rest[0])), string(rest[2]))
			return appendInt(out, 1)
		}
		return appendInt(out, 0)
	default: // if GET == token then PEXPIRE
		if len(rest) != 3 {
			return append(out, "-ERR extend: want key, token and ms\r\n"...)
		}
		ms, err := strconv.ParseInt(string(rest[2]), 10, 64)
		if err != nil {
			return append(out, "-ERR Error running script: bad ms\r\n"...)
		}
		if k := n.lookup(db, rest[0]); k != nil && k.val == string(rest[1]) {
			return appendInt(out, n.pexpire(c, rest[0], ms))
		}
		return appendInt(out, 0)
	}
}

// publish sends a message to every connection subscribed to channel.
func (n *simNode) publish(channel, msg string) {
	for _, c := range n.conns {
		if c.chans[channel] && c.atNode && !c.reset {
			out := n.s.getBuf()
			out = append(out, "*3\r\n"...)
			out = simAppendBulk(out, "message")
			out = simAppendBulk(out, channel)
			out = simAppendBulk(out, msg)
			n.s.toClient(c, out, 0)
		}
	}
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
	if cnt < 1 || cnt > 64 {
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
