//go:build !wasip1

package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// respTransport is core.New's Transport: a minimal RESP2 client that writes
// a request to every node first and then reads the replies node by node in
// the calling goroutine, so the nodes work in parallel without a goroutine
// per node (only dials of new connections get goroutines, when several are
// needed at once).
type respTransport struct {
	nodes   []*respNode
	names   []string
	timeout time.Duration
	closed  atomic.Bool
}

// respNode is one node: how to reach it and its idle connections.
type respNode struct {
	opt    *redis.Options
	rawURL string // only to scrub the password from messages

	mu     sync.Mutex
	idle   []*respConn // most recently used last
	closed bool
}

const (
	// maxIdlePerNode bounds the connections kept per node; concurrent
	// calls beyond it dial extra ones, which are closed after use.
	maxIdlePerNode = 8
	// lateGrace: once one node has used up the deadline, the replies of
	// the others that have (at least partly) arrived are read with this
	// much extra time: a deadline in the past would make every read fail
	// at once, losing answers that came in time.
	lateGrace = time.Millisecond
)

var errTransportClosed = errors.New("liblock: transport closed")

// newRespTransport parses every node URL (with go-redis's parser, so the
// accepted forms and messages stay those of go-redis) without connecting.
func newRespTransport(urls []string, timeout time.Duration) (*respTransport, error) {
	t := &respTransport{timeout: timeout}
	for i, raw := range urls {
		opt, err := redis.ParseURL(raw)
		if err != nil {
			return nil, argError(fmt.Sprintf("nodes[%d]", i), "%s", scrub(err.Error(), raw))
		}
		t.nodes = append(t.nodes, &respNode{opt: opt, rawURL: raw})
		t.names = append(t.names, opt.Addr)
	}
	return t, nil
}

func (t *respTransport) Nodes() []string { return t.names }

// Exec sends every command, then reads every reply. Each node's exchange
// ends by min(now + node timeout, ctx's deadline), or when ctx ends.
func (t *respTransport) Exec(ctx context.Context, cmds []Command) []Reply {
	replies := make([]Reply, len(cmds))
	if err := ctx.Err(); err != nil {
		return failAll(replies, cmds, err)
	}
	if t.closed.Load() {
		return failAll(replies, cmds, errTransportClosed)
	}
	deadline := time.Now().Add(t.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var g *interrupter
	if ctx.Done() != nil {
		// Cancellation interrupts blocked reads; no goroutine unless ctx
		// is a kind of context the context package cannot hook into.
		g = &interrupter{conns: make([]net.Conn, 0, len(cmds))}
		stop := context.AfterFunc(ctx, g.interrupt)
		defer g.finish(stop)
	}

	conns := make([]*respConn, len(cmds))
	var dials []int
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		cn := t.nodes[i].get()
		if cn == nil {
			dials = append(dials, i)
			continue
		}
		if !g.track(cn.nc) {
			cn.close()
			replies[i].Err = ctx.Err()
			continue
		}
		_ = cn.nc.SetDeadline(deadline)
		if err := cn.write(cmd); err != nil {
			cn.close()
			t.nodes[i].discardIdle()
			replies[i].Err = ioError(ctx, err)
			continue
		}
		conns[i] = cn
	}
	switch len(dials) {
	case 0:
	case 1:
		i := dials[0]
		conns[i], replies[i].Err = t.dial(ctx, i, cmds[i], deadline, g)
	default:
		// In parallel: a node that does not answer SYNs must not use up
		// the others' time.
		var wg sync.WaitGroup
		for _, i := range dials {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conns[i], replies[i].Err = t.dial(ctx, i, cmds[i], deadline, g)
			}()
		}
		wg.Wait()
	}

	overdue := false // a node has used up the deadline
	for i, cn := range conns {
		if cn == nil {
			continue
		}
		if !overdue && !time.Now().Before(deadline) {
			overdue = true // e.g. a dial used up the time
		}
		if overdue {
			// The deadline has passed, and a read would fail at once
			// even if the reply is there: read only the replies that
			// arrived (in time), with a little time to finish them.
			if g.fired() || !cn.pending() {
				cn.close()
				conns[i] = nil
				t.nodes[i].discardIdle()
				replies[i].Err = ioError(ctx, cn.timeoutError())
				continue
			}
			_ = cn.nc.SetReadDeadline(time.Now().Add(lateGrace))
		}
		r, err := readReply(cn.r)
		if err != nil {
			cn.close()
			conns[i] = nil
			t.nodes[i].discardIdle()
			replies[i].Err = ioError(ctx, err)
			continue
		}
		replies[i] = r
	}
	if g != nil {
		g.finish(nil) // no interrupt may touch a connection once it is idle
	}
	for i, cn := range conns {
		if cn != nil {
			t.nodes[i].put(cn)
		}
	}
	return replies
}

// dial makes a new connection to node i and writes cmd on it.
func (t *respTransport) dial(ctx context.Context, i int, cmd Command, deadline time.Time, g *interrupter) (*respConn, error) {
	n := t.nodes[i]
	cn, err := dialConn(ctx, n.opt, n.rawURL, deadline, g.track)
	if err != nil {
		return nil, ioError(ctx, err)
	}
	_ = cn.nc.SetDeadline(deadline)
	if err := cn.write(cmd); err != nil {
		cn.close()
		return nil, ioError(ctx, err)
	}
	return cn, nil
}

// ioError reports an interrupted exchange as the context's error.
func ioError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}

func failAll(replies []Reply, cmds []Command, err error) []Reply {
	for i, cmd := range cmds {
		if cmd != nil {
			replies[i].Err = err
		}
	}
	return replies
}

func (t *respTransport) Close() error {
	t.closed.Store(true)
	for _, n := range t.nodes {
		n.mu.Lock()
		n.closed = true
		idle := n.idle
		n.idle = nil
		n.mu.Unlock()
		for _, cn := range idle {
			cn.close()
		}
	}
	return nil
}

// get takes the most recently used idle connection that is still alive, or
// returns nil.
func (n *respNode) get() *respConn {
	for {
		n.mu.Lock()
		k := len(n.idle)
		if k == 0 || n.closed {
			n.mu.Unlock()
			return nil
		}
		cn := n.idle[k-1]
		n.idle[k-1] = nil
		n.idle = n.idle[:k-1]
		n.mu.Unlock()
		// One non-blocking recv (as go-redis does): a connection the
		// server closed (restart, client timeout) is replaced here
		// instead of failing a request. Measured: within the noise of
		// the pair benchmark, next to the write syscalls.
		if cn.alive() {
			return cn
		}
		cn.close()
	}
}

// put returns a connection whose last reply was read whole.
func (n *respNode) put(cn *respConn) {
	n.mu.Lock()
	if n.closed || len(n.idle) >= maxIdlePerNode {
		n.mu.Unlock()
		cn.close()
		return
	}
	n.idle = append(n.idle, cn)
	n.mu.Unlock()
}

// discardIdle closes the idle connections after one failed: the node most
// likely restarted or died, and they would fail too, one request each.
func (n *respNode) discardIdle() {
	n.mu.Lock()
	idle := n.idle
	n.idle = nil
	n.mu.Unlock()
	for _, cn := range idle {
		cn.close()
	}
}

// interrupter ends the blocked I/O of one Exec when its context ends, by
// moving the deadlines of the connections it uses into the past. A nil
// interrupter (a context that never ends) does nothing.
type interrupter struct {
	mu       sync.Mutex
	conns    []net.Conn
	canceled bool // ctx ended: every tracked connection is interrupted
	done     bool // Exec finished with the connections
}

// track registers nc; false means ctx has already ended.
func (g *interrupter) track(nc net.Conn) bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.canceled {
		return false
	}
	g.conns = append(g.conns, nc)
	return true
}

func (g *interrupter) interrupt() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return
	}
	g.canceled = true
	past := time.Unix(1, 0)
	for _, nc := range g.conns {
		_ = nc.SetDeadline(past)
	}
}

func (g *interrupter) fired() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.canceled
}

// finish unhooks from the context (stop, when given) and makes sure no
// interrupt runs afterwards: an interrupt already running holds mu until
// it is done.
func (g *interrupter) finish(stop func() bool) {
	if stop != nil {
		stop()
	}
	g.mu.Lock()
	g.done = true
	g.mu.Unlock()
}
