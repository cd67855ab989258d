package engine

import (
	"strconv"
	"strings"
)

// Sentinel nodes. A node whose spec has a MasterName is the primary of a
// Sentinel-managed deployment. Every new connection to it starts by
// resolving the primary, within the one node timeout the connection has to
// open and answer its handshake (node.open arms that timer once):
//
//  1. ask the sentinels in turn, from the one that answered last:
//     a connection to the sentinel, AUTH with the sentinel credentials when
//     the URL has some, then SENTINEL get-master-addr-by-name NAME. A
//     sentinel that cannot be reached, refuses, or knows no such master is
//     skipped; when none names a primary the node fails with every cause.
//  2. connect to the address it names, with the usual handshake (AUTH,
//     SELECT, CLIENT SETNAME, or PING) followed by ROLE. Only a "master"
//     answer makes the connection ready: requests queued for the node are
//     written after it and never before, so no lock command goes to a
//     replica that a sentinel still names (its view lags a failover).
//     Another answer, or a primary that cannot be reached, asks the
//     sentinels again (at most once more than there are sentinels, so that
//     a deployment in the middle of a failover does not spin).
//
// A ready connection that gets a -READONLY, -LOADING or -MASTERDOWN reply
// (the primary was demoted, restarted empty, or lost its quorum) is closed
// after that reply is delivered as the node's failure: the next request
// opens a new connection, which resolves again. A connection failure does
// the same, and so does a WAIT that too few replicas answered (wait.go),
// closed before its reply is delivered: after a failover the old primary
// answers ROLE master for seconds (until Sentinel converts it), with its
// replicas gone to the promoted one, so what is written there reaches no
// replica. Grants, extensions and releases are all waited for, so none
// written there counts; the sentinels' own view lags the promotion, which
// is why a replica's acknowledgement, not a sentinel's answer, decides. The engine starts no goroutine and sleeps nowhere: the host
// opens the connections the engine asks for (ActOpen), as for any node.
type sentinelState struct {
	next    int      // the sentinel to ask first: the one that answered last
	tried   int      // sentinels asked in this resolution
	retries int      // re-resolutions in this connection's budget
	causes  []string // why each sentinel asked gave no primary
	primary string   // the address the sentinels named last
}

// stResolving: asking a sentinel (a connection to it, opening or open).
const stResolving = stReady + 1

// sentinelName is the node's name in errors: its master name and first
// sentinel.
func sentinelName(n Node) string {
	return "master_name=" + n.MasterName + " via " + n.Sentinels[0]
}

// sentinelID identifies a Sentinel deployment for the duplicate check:
// its master name and its sentinels, in order.
func sentinelID(n Node) string {
	return "sentinel " + n.MasterName + " " + strings.Join(n.Sentinels, ",")
}

// isSentinel reports whether the node is found through sentinels.
func (n *node) isSentinel() bool { return n.spec.MasterName != "" }

// resolve starts a resolution on a fresh connection attempt (node.open).
func (n *node) resolve(e *Engine) {
	if n.sent == nil {
		n.sent = &sentinelState{}
	}
	s := n.sent
	s.tried, s.retries, s.causes = 0, 0, s.causes[:0]
	n.askSentinel(e)
}

// askSentinel opens a connection to the next sentinel.
func (n *node) askSentinel(e *Engine) {
	s := n.sent
	addr := n.spec.Sentinels[s.next%len(n.spec.Sentinels)]
	e.nextConn++
	n.conn, n.state = e.nextConn, stResolving
	sp := n.spec
	e.emit(Action{Kind: ActOpen, Conn: n.conn, Node: n.idx, Dial: &Dial{
		Network: "tcp", Addr: addr, TLS: sp.TLS, ServerName: sp.ServerName, SkipVerify: sp.SkipVerify,
	}})
}

// sentinelOpened writes the question to the sentinel just connected.
func (n *node) sentinelOpened(e *Engine) {
	sp := n.spec
	switch {
	case sp.SentinelPassword != "" && sp.SentinelUsername != "":
		n.out = AppendCommand(n.out, "AUTH", sp.SentinelUsername, sp.SentinelPassword)
		n.inflight.push(e.newRequest(n, sentinelStep{n: n, auth: true}, command{kind: cmdRaw}))
	case sp.SentinelPassword != "":
		n.out = AppendCommand(n.out, "AUTH", sp.SentinelPassword)
		n.inflight.push(e.newRequest(n, sentinelStep{n: n, auth: true}, command{kind: cmdRaw}))
	}
	n.out = AppendCommand(n.out, "SENTINEL", "get-master-addr-by-name", sp.MasterName)
	n.inflight.push(e.newRequest(n, sentinelStep{n: n}, command{kind: cmdRaw}))
}

// sentinelStep receives a sentinel's answers.
type sentinelStep struct {
	n    *node
	auth bool
}

func (h sentinelStep) reply(e *Engine, _ int, r Reply) {
	n := h.n
	if n.state != stResolving {
		return
	}
	switch {
	case r.Err != nil && h.auth:
		n.sentinelFailed(e, "AUTH refused: "+scrub(r.Err.Error(), n.spec.SentinelPassword))
	case h.auth:
	case r.Err != nil:
		n.sentinelFailed(e, scrub(r.Err.Error(), n.spec.SentinelPassword))
	case r.Nil || len(r.Elems) == 0:
		n.sentinelFailed(e, "knows no master named "+strconv.Quote(n.spec.MasterName))
	case len(r.Elems) != 2 || r.Elems[0].Str == "" || r.Elems[1].Str == "":
		n.sentinelFailed(e, "answered get-master-addr-by-name with something other than [host, port]")
	default:
		n.sent.next %= len(n.spec.Sentinels) // the one that answered stays first
		n.connectPrimary(e, joinHostPort(r.Elems[0].Str, r.Elems[1].Str))
	}
}

// joinHostPort is net.JoinHostPort.
func joinHostPort(host, port string) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// sentinelFailed records why the sentinel asked gave no primary and asks
// the next one, or fails the node when every sentinel was asked.
func (n *node) sentinelFailed(e *Engine, cause string) {
	s := n.sent
	s.causes = append(s.causes, n.spec.Sentinels[s.next%len(n.spec.Sentinels)]+": "+cause)
	s.tried++
	s.next = (s.next + 1) % len(n.spec.Sentinels)
	if s.tried >= len(n.spec.Sentinels) {
		n.fail(e, errorString("sentinel: no sentinel named the primary of "+strconv.Quote(n.spec.MasterName)+" ("+strings.Join(s.causes, "; ")+")"))
		return
	}
	n.closeConn(e)
	n.askSentinel(e)
}

// connectPrimary leaves the sentinel for the primary it named.
func (n *node) connectPrimary(e *Engine, addr string) {
	n.closeConn(e)
	n.sent.primary = addr
	e.nextConn++
	n.conn, n.state = e.nextConn, stConnecting
	sp := n.spec
	e.emit(Action{Kind: ActOpen, Conn: n.conn, Node: n.idx, Dial: &Dial{
		Network: "tcp", Addr: addr, TLS: sp.TLS, ServerName: sp.ServerName, SkipVerify: sp.SkipVerify,
	}})
}

// reresolve drops a primary connection that is not (or no longer) the
// primary before it carried anything, and asks the sentinels again within
// the same budget; after too many tries the node fails with why.
func (n *node) reresolve(e *Engine, why string) {
	s := n.sent
	s.retries++
	if s.retries > len(n.spec.Sentinels) {
		n.fail(e, errorString("sentinel: "+why+" (asked the sentinels "+strconv.Itoa(s.retries)+" times)"))
		return
	}
	n.closeConn(e)
	s.tried, s.causes = 0, s.causes[:0]
	n.askSentinel(e)
}

// closeConn closes the current connection of a node still opening (a
// sentinel's, or a primary's before it was ready), keeping the requests
// queued for the node and the budget's timer.
func (n *node) closeConn(e *Engine) {
	for _, r := range n.inflight.items() {
		// Only the connection's own steps (sentinel questions, handshake)
		// are in flight before it is ready.
		r.done = true
		e.recycle(r)
	}
	n.inflight.reset()
	if n.conn != 0 {
		e.emit(Action{Kind: ActClose, Conn: n.conn})
	}
	n.conn, n.hsLeft, n.loaded = 0, 0, 0
	n.out = n.out[:0]
	n.rbuf = n.rbuf[:0]
}

// roleChecked handles the answer to the handshake's ROLE: whether the node
// the sentinels named is the primary. It reports whether the connection
// may go on.
func (n *node) roleChecked(e *Engine, r Reply) bool {
	role := ""
	if len(r.Elems) > 0 {
		role = r.Elems[0].Str
	}
	if role == "master" {
		return true
	}
	if role == "" {
		role = "unknown"
	}
	n.reresolve(e, "the sentinels named "+n.sent.primary+", whose ROLE is "+role+", not master")
	return false
}

// connFailed handles the failure of a connection of the node: a Sentinel
// node that is still resolving asks the next sentinel, or the sentinels
// again, within its budget; any other failure fails the node's requests.
func (n *node) connFailed(e *Engine, err error) {
	if n.isSentinel() {
		switch n.state {
		case stResolving:
			n.sentinelFailed(e, err.Error())
			return
		case stConnecting, stHandshake:
			n.reresolve(e, "the primary the sentinels named ("+n.sent.primary+") failed: "+err.Error())
			return
		}
	}
	n.fail(e, err)
}

// demoted reports whether an error reply means the connection no longer
// reaches a writable primary: it was demoted to a replica (READONLY), is
// loading its data after a restart (LOADING), or lost its replicas'
// quorum (MASTERDOWN).
func demoted(r Reply) bool {
	if r.Err == nil {
		return false
	}
	if _, ok := r.Err.(RedisError); !ok {
		return false
	}
	m := r.Err.Error()
	return strings.HasPrefix(m, "READONLY") || strings.HasPrefix(m, "LOADING") || strings.HasPrefix(m, "MASTERDOWN")
}
