package engine

import (
	"errors"
	"strconv"
	"strings"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// Connection states of a node. A node has at most one connection; commands
// are pipelined on it and answered in order.
const (
	stIdle       = iota // no connection
	stConnecting        // ActOpen emitted, waiting for Opened
	stHandshake         // handshake written, waiting for its replies
	stReady             // carrying commands
)

// handler receives the reply to a request (or the node's failure as
// Reply.Err).
type handler interface {
	reply(e *Engine, node int, r Reply)
}

// request is one command to one node. Requests are recycled (Engine.reqs):
// gen tells a timer of an earlier use from the current one.
type request struct {
	node     *node
	h        handler
	cmd      command
	deadline time.Duration
	sent     time.Duration // for reports (report.go)
	done     bool
	gen      uint64
	// A cluster shard's redirected command (cluster.go): budget is the
	// deadline of its first write (0: none), asking sends ASKING before
	// it, redirects counts the redirects followed.
	budget    time.Duration
	asking    bool
	redirects uint8
}

func (r *request) live(gen uint64) bool { return gen == r.gen && !r.done }

func (r *request) fire(e *Engine, gen uint64) {
	if r.live(gen) && r.node.has(r) {
		r.node.fail(e, timeoutError("no reply within the node timeout ("+e.timeout.String()+")"))
	}
}

// write puts a request on the node's ready connection, bounded by the
// node timeout from now.
func (e *Engine) write(n *node, r *request) {
	if r.cmd.kind == cmdEvalSHA && n.loaded&r.cmd.sc.bit == 0 {
		// Not yet known to be cached on this connection's node: send the
		// source. A NOSCRIPT answer re-sent as EVAL would run after the
		// commands pipelined behind it (a release after the next acquire's
		// SET), so a script goes by its sum only once the node has run it.
		r.cmd.kind = cmdEval
	}
	r.deadline = e.now + e.timeout
	if r.budget != 0 && r.budget < r.deadline {
		r.deadline = r.budget
	}
	if r.asking {
		// ASKING applies to the next command on this connection only.
		n.out = AppendCommand(n.out, "ASKING")
		n.inflight.push(e.newRequest(n, discard{}, command{kind: cmdRaw}))
	}
	e.timers.push(r.deadline, r, r.gen)
	n.out = r.cmd.appendTo(n.out)
	n.inflight.push(r)
	if n.wait > 0 && waitsFor(r.cmd) {
		e.writeWait(n, r) // wait.go
	}
}

func (e *Engine) newRequest(n *node, h handler, c command) *request {
	var r *request
	if k := len(e.reqs); k > 0 {
		r = e.reqs[k-1]
		e.reqs = e.reqs[:k-1]
	} else {
		r = &request{}
	}
	r.node, r.h, r.cmd, r.done = n, h, c, false
	r.budget, r.asking, r.redirects = 0, false, 0
	return r
}

// recycle takes back a request nobody refers to any more (timers know it
// by its gen).
func (e *Engine) recycle(r *request) {
	r.gen++
	r.node, r.h, r.cmd = nil, nil, command{}
	e.reqs = append(e.reqs, r)
}

type node struct {
	idx      int
	spec     Node
	name     string
	conn     ConnID
	state    int
	connGen  uint64
	queue    []*request // waiting for the connection to be ready
	inflight fifo       // written, answered in order
	hsLeft   int        // handshake replies still expected
	out      []byte     // bytes to write at the end of this input
	spare    []byte
	rbuf     []byte    // received, not yet a whole reply
	scan     replyScan // how far the reply at rbuf's front was scanned (resp.go)
	loaded   uint32    // scripts the node has run on this connection (script.bit)
	// sub marks a node's pub/sub connection (Engine.subNodes), and chans
	// the channels it subscribed to or is subscribing to.
	sub   bool
	chans map[string]bool
	// sent is a Sentinel node's resolution (sentinel.go); wait is how many
	// replicas must acknowledge each grant (wait.go), 0 for none.
	sent *sentinelState
	wait int
	// cl is a Redis Cluster node's slot map and shard connections, and
	// parent the cluster node of a shard connection (cluster.go).
	cl     *clusterState
	parent *node
	// waitDefault: wait is the default, not the caller's wait_replicas.
	// runID is the server the node's last connection reached, refused a
	// configuration error found at connect (identity.go).
	waitDefault bool
	runID       string
	refused     error
}

// fifo is a queue of requests that keeps its array: a node's in-flight
// requests are taken from the front as replies come, and slicing them off
// would leave append no capacity, so that every write allocated a new
// array.
type fifo struct {
	q    []*request // q[head:] are queued; q[:head] are nil
	head int
}

func (f *fifo) len() int { return len(f.q) - f.head }

// items returns the queued requests, oldest first; the slice is valid until
// the next push.
func (f *fifo) items() []*request { return f.q[f.head:] }

func (f *fifo) push(r *request) {
	if f.head > 0 && len(f.q) == cap(f.q) && 2*f.head >= len(f.q) {
		// Full, half of it taken: move the rest down rather than grow.
		k := copy(f.q, f.q[f.head:])
		clear(f.q[k:])
		f.q, f.head = f.q[:k], 0
	}
	f.q = append(f.q, r)
}

// pop removes and returns the oldest request; the queue must not be empty.
func (f *fifo) pop() *request {
	r := f.q[f.head]
	f.q[f.head] = nil
	f.head++
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	}
	return r
}

// reset empties the queue, keeping its array.
func (f *fifo) reset() {
	clear(f.q)
	f.q, f.head = f.q[:0], 0
}

func (n *node) has(r *request) bool {
	for _, x := range n.inflight.items() {
		if x == r {
			return true
		}
	}
	for _, x := range n.queue {
		if x == r {
			return true
		}
	}
	return false
}

// send issues a command to the node, bounded by the node timeout.
func (e *Engine) send(n *node, h handler, c command) {
	if n.cl != nil {
		e.clusterSend(n, h, c) // routed to a shard (cluster.go)
		return
	}
	r := e.newRequest(n, h, c)
	r.sent = e.now
	e.sendRequest(r)
}

// sendRequest writes r on its node's connection, or queues it until the
// connection is ready.
func (e *Engine) sendRequest(r *request) {
	n := r.node
	if n.state == stReady {
		e.write(n, r)
		return
	}
	// Until the connection is ready, its own deadline (one node timeout to
	// connect and answer the handshake) bounds the request; its exchange
	// gets a node timeout of its own once it is written.
	n.queue = append(n.queue, r)
	if n.state == stIdle {
		n.open(e)
	}
}

// sendScript runs a script by its sum on one key with up to two
// arguments; a node that does not have it cached gets the source (EVAL)
// instead.
func (e *Engine) sendScript(n *node, h handler, sc *script, key string, args ...string) {
	e.sendScript2(n, h, sc, key, "", args...)
}

// sendScript2 is sendScript on two keys (key2 may be empty: one key).
func (e *Engine) sendScript2(n *node, h handler, sc *script, key, key2 string, args ...string) {
	c := command{kind: cmdEvalSHA, sc: sc, key: key, key2: key2, nargs: uint8(len(args))}
	if len(args) > 0 {
		c.a1 = args[0]
	}
	if len(args) > 1 {
		c.a2 = args[1]
	}
	e.send(n, h, c)
}

func (n *node) open(e *Engine) {
	if n.refused != nil {
		// Refused for the engine's life (identity.go): failed by the
		// timer, never inside the call that sent the request.
		n.state = stConnecting
		n.connGen++
		e.timers.push(e.now, n, n.connGen)
		return
	}
	e.nextConn++
	n.conn, n.state = e.nextConn, stConnecting
	n.connGen++
	e.timers.push(e.now+e.timeout, n, n.connGen)
	if n.isSentinel() {
		// The whole resolution (sentinels, primary, handshake, ROLE) fits
		// in this one node timeout.
		n.resolve(e)
		return
	}
	s := n.spec
	e.emit(Action{Kind: ActOpen, Conn: n.conn, Node: n.idx, Dial: &Dial{
		Network: s.Network, Addr: s.Addr, TLS: s.TLS, ServerName: s.ServerName, SkipVerify: s.SkipVerify,
	}})
}

func (n *node) live(gen uint64) bool {
	return gen == n.connGen && (n.state == stConnecting || n.state == stHandshake || n.state == stResolving)
}

// fire ends a connection that did not open and answer its handshake within
// the node timeout.
func (n *node) fire(e *Engine, gen uint64) {
	if gen == n.connGen && (n.state == stConnecting || n.state == stHandshake || n.state == stResolving) {
		if n.refused != nil {
			n.fail(e, n.refused)
			return
		}
		if e.noConnectDeadline {
			return // the simulation's negative control (Engine.noConnectDeadline)
		}
		n.fail(e, timeoutError("connect: no answer within the node timeout ("+e.timeout.String()+")"))
	}
}

// handshakeStep is one command a new connection sends before any other.
type handshakeStep struct {
	name string
	n    *node // the connection's node: a data or a pub/sub one
}

func (h handshakeStep) reply(e *Engine, _ int, r Reply) {
	n := h.n
	if h.name == "INFO" {
		if !n.identify(e, r) {
			return // refused (identity.go)
		}
	} else if r.Err != nil {
		n.fail(e, errors.New(h.name+" refused: "+scrub(r.Err.Error(), n.spec.Password)))
		return
	}
	if h.name == "ROLE" && !n.roleChecked(e, r) {
		return // asking the sentinels again (sentinel.go)
	}
	n.hsLeft--
	if n.hsLeft == 0 && n.state == stHandshake {
		n.state = stReady
		q := n.queue
		n.queue = nil
		for _, r := range q {
			e.write(n, r)
		}
	}
}

// opened writes the handshake: AUTH, SELECT and CLIENT SETNAME as the node
// asks, or PING. The connection carries nothing else until the node has
// answered: a frozen node still accepts connections (the kernel does), and
// a command written to one would run whenever it thaws, long after we gave
// up on it.
func (n *node) opened(e *Engine) {
	s := n.spec
	var steps [][]string
	switch {
	case s.Password != "" && s.Username != "":
		steps = append(steps, []string{"AUTH", s.Username, s.Password})
	case s.Password != "":
		steps = append(steps, []string{"AUTH", s.Password})
	}
	if s.DB != 0 {
		steps = append(steps, []string{"SELECT", strconv.Itoa(s.DB)})
	}
	if s.ClientName != "" {
		steps = append(steps, []string{"CLIENT", "SETNAME", s.ClientName})
	}
	if n.isSentinel() {
		// Only a primary's connection becomes ready (sentinel.go); ROLE
		// also does PING's work.
		steps = append(steps, []string{"ROLE"})
	}
	if n.wantsInfo() {
		// Which server this is (identity.go); INFO also does PING's work.
		steps = append(steps, []string{"INFO"})
	}
	if len(steps) == 0 {
		steps = append(steps, []string{"PING"})
	}
	n.state, n.hsLeft = stHandshake, len(steps)
	// The handshake is answered before anything already written.
	rest := append([]*request(nil), n.inflight.items()...)
	n.inflight.reset()
	for _, st := range steps {
		n.out = AppendCommand(n.out, st...)
		n.inflight.push(e.newRequest(n, handshakeStep{name: st[0], n: n}, command{kind: cmdRaw}))
	}
	for _, r := range rest {
		n.inflight.push(r)
	}
}

func (n *node) received(e *Engine, p []byte) {
	// Replies are parsed where they are unless part of one was left over
	// from before: most inputs hold whole replies, and copying them into
	// rbuf first cost a copy, and a move of the rest, per input. A Reply
	// copies what it keeps (parseReply), and what is left of p is copied
	// below, so nothing refers to p once this returns.
	buf, inRbuf := p, len(n.rbuf) > 0
	if inRbuf {
		n.rbuf = append(n.rbuf, p...)
		buf = n.rbuf
	}
	off := 0
	conn := n.conn
	if n.scan.conn != conn {
		n.scan.reset(conn) // a new connection: nothing scanned
	}
	for off < len(buf) && n.conn == conn {
		// Scanned first: a reply in pieces is decoded once, when whole.
		k, err := n.scan.scan(buf[off:])
		if err != nil {
			n.fail(e, err)
			return
		}
		if k == 0 {
			if len(buf)-off > maxReply {
				n.fail(e, protocolError("a reply longer than "+strconv.Itoa(maxReply)+" bytes"))
				return
			}
			break
		}
		r, k2, err := parseReply(buf[off : off+k])
		if err == nil && k2 != k {
			err = protocolError("a reply of " + strconv.Itoa(k) + " bytes decoded as " + strconv.Itoa(k2))
		}
		if err != nil {
			n.fail(e, err)
			return
		}
		off += k
		if n.sub && e.push(n, r) {
			continue // a push, not the answer to a request (spubsub.go)
		}
		if n.inflight.len() == 0 {
			n.fail(e, protocolError("a reply nobody asked for"))
			return
		}
		e.deliver(n.inflight.pop(), r)
	}
	if n.conn != conn {
		return // failed while delivering: rbuf belongs to the next connection
	}
	if inRbuf {
		rest := copy(n.rbuf, n.rbuf[off:])
		n.rbuf = n.rbuf[:rest]
	} else {
		n.rbuf = append(n.rbuf, buf[off:]...)
	}
}

func (e *Engine) deliver(req *request, r Reply) {
	req.done = true
	if req.node.parent != nil && r.Err != nil && e.redirect(req, r) {
		e.recycle(req) // re-sent to the shard named (cluster.go)
		return
	}
	if sc := req.cmd.sc; sc != nil {
		if r.Err != nil && strings.HasPrefix(r.Err.Error(), "NOSCRIPT") {
			// The node lost its script cache (SCRIPT FLUSH): send the
			// source this once, and again until it has run it.
			req.node.loaded &^= sc.bit
			if a, ok := unwrapWait(req.h).(*attempt); ok && a.cleanedUp {
				// The attempt's cleanup is already written behind it on
				// this connection: re-sent now, the script would run after
				// the cleanup and set a key nobody deletes (the node lost
				// its scripts under a live connection: SCRIPT FLUSH, or a
				// restart the connection survived). The node ran nothing:
				// a failure, as it is.
				req.h.reply(e, req.node.idx, r)
				e.recycle(req)
				return
			}
			c := req.cmd
			c.kind = cmdEval
			nr := e.newRequest(req.node, req.h, c)
			nr.sent = e.now
			// A cluster shard's redirected command keeps its ASKING, its
			// deadline and its redirect count (cluster.go).
			nr.budget, nr.asking, nr.redirects = req.budget, req.asking, req.redirects
			e.sendRequest(nr)
			e.recycle(req)
			return
		}
		req.node.loaded |= sc.bit
	}
	n := req.node
	if e.report && !n.sub {
		e.repNode(req, r.Err)
	}
	if n.isSentinel() && waitShort(req.h, r) && n.state == stReady {
		// Its replicas did not acknowledge: after a failover the old
		// primary may answer as one for seconds, its replicas gone to the
		// promoted one. The connection is dropped before the reply is
		// handed over, so that what the handler sends next (a failed
		// grant's cleanup, a retry) asks the sentinels again; what is in
		// flight behind this reply fails now.
		n.fail(e, errorString("too few replicas acknowledged (WAIT): asking the sentinels again"))
	}
	req.h.reply(e, n.idx, r)
	e.recycle(req)
	if n.isSentinel() && demoted(r) && n.state == stReady {
		// No longer a writable primary: the next request resolves again
		// (sentinel.go); what is in flight behind this reply fails now.
		n.fail(e, errorString("the primary answered "+r.Err.Error()+": asking the sentinels again"))
	}
	if n.parent != nil && clusterDown(r) && n.state == stReady {
		// Not a serving primary any more: the map is asked again (fail).
		n.fail(e, errorString("the shard answered "+r.Err.Error()+": asking for the slot map again"))
	}
}

// fail closes the node's connection and fails every request on it with
// err; the next request opens a new connection.
func (n *node) fail(e *Engine, err error) {
	if n.parent != nil {
		// A shard failed: the map is asked again, and its slots wait
		// for it (cluster.go).
		n.parent.cl.stale = true
		n.parent.cl.suspect[n.spec.Addr] = true
	}
	// reqs takes the arrays: the replies below may queue new requests on
	// this node, which must not write over the ones still to be failed.
	reqs := append(n.inflight.items(), n.queue...)
	n.inflight, n.queue = fifo{}, nil
	n.drop(e)
	for _, r := range reqs {
		if !r.done {
			r.done = true
			if e.report && !n.sub {
				e.repNode(r, err)
			}
			r.h.reply(e, n.idx, Reply{Err: err})
			e.recycle(r)
		}
	}
}

// drop forgets the connection and tells the host to close it.
func (n *node) drop(e *Engine) {
	if n.conn != 0 {
		e.emit(Action{Kind: ActClose, Conn: n.conn})
	}
	n.conn, n.state, n.hsLeft = 0, stIdle, 0
	n.loaded = 0 // a new connection may reach a restarted node
	n.connGen++
	clear(n.chans) // a new connection subscribes afresh
	n.out = n.out[:0]
	n.rbuf = n.rbuf[:0]
}

// flush turns the bytes this input wrote to the node into one ActWrite.
func (n *node) flush(e *Engine) {
	if len(n.out) == 0 || n.conn == 0 {
		return
	}
	e.emit(Action{Kind: ActWrite, Conn: n.conn, Data: n.out})
	n.out, n.spare = n.spare[:0], n.out
}

// scrub removes a password from a message that might repeat it.
func scrub(msg, password string) string {
	if password == "" {
		return msg
	}
	return strings.ReplaceAll(msg, password, "xxxxx")
}
