//go:build !wasip1

package core

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// maxConnsPerNode bounds the connections open to one node (idle, in
	// use or being dialed). A burst of concurrent calls beyond it waits,
	// within its deadline, for a connection to come back: a thousand
	// concurrent acquires must not open a thousand sockets per node (file
	// descriptors, Redis's maxclients). go-redis's pool did the same (20
	// on 2 cores). Idle connections are kept up to the same bound: closing
	// them only to dial again at the next burst costs more.
	maxConnsPerNode = 16
)

// respNode is one node: how to reach it, and its connections.
type respNode struct {
	opt    *redis.Options
	rawURL string // only to scrub the password from messages

	mu      sync.Mutex
	idle    []*respConn      // most recently used last
	open    int              // idle + in use + being dialed
	waiters []chan *respConn // oldest first; a nil sent is a slot to dial with
	closed  bool
}

// take returns an idle connection that is still alive, or reserves a slot
// for a new one (dial), or reports that the caller must wait (both false).
func (n *respNode) take() (cn *respConn, dial bool) {
	for {
		n.mu.Lock()
		if n.closed {
			n.mu.Unlock()
			return nil, false
		}
		k := len(n.idle)
		if k == 0 {
			dial = n.open < maxConnsPerNode
			if dial {
				n.open++
			}
			n.mu.Unlock()
			return nil, dial
		}
		cn = n.idle[k-1]
		n.idle[k-1] = nil
		n.idle = n.idle[:k-1]
		n.mu.Unlock()
		// One non-blocking recv (as go-redis does): a connection the
		// server closed (restart, client timeout) is replaced here
		// instead of failing a request. Measured: within the noise of
		// the pair benchmark, next to the write syscalls.
		if cn.alive() {
			return cn, false
		}
		n.discard(cn)
	}
}

// wait waits until deadline for a connection, or a slot to dial one, when
// the node has maxConnsPerNode open.
func (n *respNode) wait(ctx context.Context, deadline time.Time) (cn *respConn, dial bool, err error) {
	if cn, dial = n.take(); cn != nil || dial {
		return cn, dial, nil
	}
	ch := make(chan *respConn, 1)
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, false, errTransportClosed
	}
	n.waiters = append(n.waiters, ch)
	n.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case cn := <-ch:
		return cn, cn == nil, nil
	case <-timer.C:
		err = fmt.Errorf("no connection free within the node timeout (%d open)", maxConnsPerNode)
	case <-ctx.Done():
		err = ctx.Err()
	}
	n.mu.Lock()
	gone := true
	for i, w := range n.waiters {
		if w == ch {
			n.waiters = append(n.waiters[:i], n.waiters[i+1:]...)
			gone = false
			break
		}
	}
	n.mu.Unlock()
	if gone { // handed one just now: pass it on
		if cn := <-ch; cn != nil {
			n.put(cn)
		} else {
			n.release()
		}
	}
	return nil, false, err
}

// put returns a connection whose last reply was read whole: to a waiter,
// or to the idle list (closed, once the node is).
func (n *respNode) put(cn *respConn) {
	n.mu.Lock()
	if len(n.waiters) > 0 && !n.closed {
		w := n.waiters[0]
		n.waiters = n.waiters[1:]
		w <- cn // buffered, and each waiter is sent to once
		n.mu.Unlock()
		return
	}
	if !n.closed {
		n.idle = append(n.idle, cn)
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	n.discard(cn)
}

// discard closes a connection that is not idle and frees its slot.
func (n *respNode) discard(cn *respConn) {
	cn.close()
	n.release()
}

// release frees a slot: a waiter may dial with it.
func (n *respNode) release() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.waiters) > 0 && !n.closed {
		w := n.waiters[0]
		n.waiters = n.waiters[1:]
		w <- nil
		return
	}
	n.open--
}

// discardIdle closes the idle connections after one failed: the node most
// likely restarted or died, and they would fail too, one request each.
func (n *respNode) discardIdle() {
	n.mu.Lock()
	idle := n.idle
	n.idle = nil
	n.mu.Unlock()
	for _, cn := range idle {
		n.discard(cn)
	}
}

// close closes the idle connections and makes the node refuse new ones;
// connections in use are closed when they come back.
func (n *respNode) close() {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.discardIdle()
}

// conns reports how many connections are idle and open, and how many
// calls wait for one.
func (n *respNode) conns() (idle, open, waiting int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.idle), n.open, len(n.waiters)
}
