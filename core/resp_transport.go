//go:build !wasip1

package core

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// lateGrace: once one node has used up the deadline, the replies of the
// others that have (at least partly) arrived are read with this much extra
// time: a deadline in the past would make every read fail at once, losing
// answers that came in time.
const lateGrace = time.Millisecond

var errTransportClosed = errors.New("liblock: transport closed")

// newRespTransport parses every node URL (with go-redis's parser, so the
// accepted forms and messages stay those of go-redis) without connecting.
// It uses the URL's address, user name, password, db, TLS settings
// (skip_verify) and client_name; go-redis's pool, retry and timeout
// parameters are accepted and ignored, as the node timeout governs every
// request (core.New overrode them before too).
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
		// Only a cancellation interrupts: a deadline of ctx is already
		// in deadline, which the connections enforce themselves, and the
		// replies that arrived before it must still be read.
		stop := context.AfterFunc(ctx, func() {
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				g.interrupt()
			}
		})
		defer g.finish(stop)
	}

	// Write on every idle connection at once.
	conns := make([]*respConn, len(cmds))
	var dials, waits []int // nodes with no idle connection
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		switch cn, dial := t.nodes[i].take(); {
		case cn != nil:
			conns[i], replies[i].Err = t.send(ctx, i, cn, cmd, deadline, g)
		case dial:
			dials = append(dials, i)
		default:
			waits = append(waits, i)
		}
	}
	// Dial where needed, in parallel when more than one: a node that does
	// not answer SYNs must not use up the others' time.
	switch len(dials) {
	case 0:
	case 1:
		i := dials[0]
		conns[i], replies[i].Err = t.connect(ctx, i, cmds[i], true, deadline, g)
	default:
		var wg sync.WaitGroup
		for _, i := range dials {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conns[i], replies[i].Err = t.connect(ctx, i, cmds[i], true, deadline, g)
			}()
		}
		wg.Wait()
	}
	t.collect(ctx, conns, replies, deadline, g)
	// Nodes with all their connections in use (a burst of concurrent
	// calls): wait for one, holding none, so that calls waiting on each
	// other's connections cannot block each other until the deadline.
	for _, i := range waits {
		conns[i], replies[i].Err = t.connect(ctx, i, cmds[i], false, deadline, g)
		t.collect(ctx, conns, replies, deadline, g)
	}
	return replies
}

// collect reads the reply on every connection in conns, node by node, and
// hands each connection back to its node (or closes it on failure).
func (t *respTransport) collect(ctx context.Context, conns []*respConn, replies []Reply, deadline time.Time, g *interrupter) {
	overdue := false // the deadline has passed
	for i, cn := range conns {
		if cn == nil {
			continue
		}
		conns[i] = nil
		if !overdue && !time.Now().Before(deadline) {
			overdue = true // a frozen node, or a dial, used up the time
		}
		if overdue {
			// A read would fail at once even if the reply is there:
			// read only the replies that arrived (in time), with a
			// little time to finish them.
			if g.fired() || !cn.pending() {
				t.fail(i, cn)
				replies[i].Err = ioError(ctx, cn.timeoutError())
				continue
			}
			_ = cn.nc.SetReadDeadline(time.Now().Add(lateGrace))
		}
		r, err := readReply(cn.r)
		if err != nil {
			t.fail(i, cn)
			replies[i].Err = ioError(ctx, err)
			continue
		}
		replies[i] = r
		// No interrupt may touch a connection once another call may use it.
		g.untrack(cn.nc)
		t.nodes[i].put(cn)
	}
}

// send writes cmd on cn, which node i gave out.
func (t *respTransport) send(ctx context.Context, i int, cn *respConn, cmd Command, deadline time.Time, g *interrupter) (*respConn, error) {
	if !g.track(cn.nc) {
		t.nodes[i].discard(cn)
		return nil, ctx.Err()
	}
	_ = cn.nc.SetDeadline(deadline)
	if err := cn.write(cmd); err != nil {
		t.fail(i, cn)
		return nil, ioError(ctx, err)
	}
	return cn, nil
}

// connect gets node i a connection when it had no idle one, dialing one
// (with the slot reserved, or one freed while waiting when the node has
// too many open) or taking one handed back, and writes cmd on it.
func (t *respTransport) connect(ctx context.Context, i int, cmd Command, reserved bool, deadline time.Time, g *interrupter) (*respConn, error) {
	n := t.nodes[i]
	var cn *respConn
	dial, err := reserved, error(nil)
	if !reserved {
		cn, dial, err = n.wait(ctx, deadline)
	}
	switch {
	case err != nil:
		return nil, err
	case dial:
		if cn, err = dialConn(ctx, n.opt, n.rawURL, deadline, g); err != nil {
			n.release()
			return nil, ioError(ctx, err)
		}
	}
	return t.send(ctx, i, cn, cmd, deadline, g)
}

// fail closes a connection that failed; the node's idle ones most likely
// failed too (a restart, a death), so they go as well.
func (t *respTransport) fail(i int, cn *respConn) {
	t.nodes[i].discard(cn)
	t.nodes[i].discardIdle()
}

// ioError reports an interrupted exchange as the context's error, and a
// bare EOF as what it means.
func ioError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("connection closed by the node (%w)", err)
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
		n.close()
	}
	return nil
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

// untrack forgets nc; once it returns, no interrupt touches nc.
func (g *interrupter) untrack(nc net.Conn) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, c := range g.conns {
		if c == nc {
			last := len(g.conns) - 1
			g.conns[i] = g.conns[last]
			g.conns[last] = nil
			g.conns = g.conns[:last]
			return
		}
	}
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
