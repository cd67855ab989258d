package engine

// Awaiting reports whether the engine expects bytes on connection c: its
// handshake or commands written on it are unanswered, or it is a pub/sub
// connection (whose messages may come at any time). A driver may leave a
// connection that is not awaited unread (the Go driver then reads on the
// caller's goroutine when the next command goes out, instead of handing
// every reply over from a reader goroutine); it must read one that is.
// The answer holds until the next input call.
func (e *Engine) Awaiting(c ConnID) bool {
	n := e.nodeOf(c)
	if n == nil {
		return false
	}
	return n.sub && n.state != stConnecting || n.state == stHandshake || n.inflight.len() > 0
}
