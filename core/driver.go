package core

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"

	"github.com/liblock/liblock/core/engine"
)

// Engine is what a Client runs: liblock's I/O-free Redlock engine, either
// *engine.Engine (native) or liblock.wasm's (wasm/host). The Client's driver
// carries out its actions over sockets and keeps its one timer.
type Engine interface {
	Acquire(engine.AcquireRequest) (engine.OpID, error)
	Inspect(resource string) (engine.OpID, error)
	Extend(engine.LockID, time.Duration) (engine.OpID, error)
	Release(engine.LockID) (engine.OpID, error)
	Cancel(engine.OpID) bool
	Forget(engine.LockID)
	Lock(engine.LockID) (engine.LockInfo, bool)
	Close()
	Opened(engine.ConnID)
	Received(engine.ConnID, []byte)
	ConnFailed(engine.ConnID, error)
	Tick()
	Next() (engine.Action, bool)
	Quorum() int
}

var _ Engine = (*engine.Engine)(nil)

// dialFunc opens a connection for the engine's ActOpen.
type dialFunc func(ctx context.Context, node int, d *engine.Dial) (net.Conn, error)

// dialNode is the driver's own dial: TCP or a unix socket, then TLS when the
// engine asks for it. Go sets TCP_NODELAY by default.
func dialNode(ctx context.Context, _ int, d *engine.Dial) (net.Conn, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, d.Network, d.Addr)
	if err != nil || !d.TLS {
		return nc, err
	}
	tc := tls.Client(nc, &tls.Config{ServerName: d.ServerName, InsecureSkipVerify: d.SkipVerify, MinVersion: tls.VersionTLS12}) //nolint:gosec // skip_verify is the user's explicit choice
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// driverConn is one connection the engine asked for.
type driverConn struct {
	nc     net.Conn // nil while dialing
	cancel context.CancelFunc
}

type opResult struct {
	lock       *Lock
	inspection *engine.Inspection
	err        error
}

// drain carries out every action the engine has; c.mu is held.
func (c *Client) drain() {
	for {
		a, ok := c.eng.Next()
		if !ok {
			return
		}
		switch a.Kind {
		case engine.ActOpen:
			// The engine closes a connection that has not opened within the
			// node timeout; the dial's own bound only frees the goroutine.
			ctx, cancel := context.WithTimeout(context.Background(), 2*c.timeout)
			dc := &driverConn{cancel: cancel}
			c.conns[a.Conn] = dc
			c.wg.Add(1)
			go c.connect(ctx, a.Conn, a.Node, *a.Dial, dc)
		case engine.ActWrite:
			if dc := c.conns[a.Conn]; dc != nil && dc.nc != nil {
				_ = dc.nc.SetWriteDeadline(time.Now().Add(c.timeout))
				if _, err := dc.nc.Write(a.Data); err != nil {
					dc.nc.Close() // its reader reports the failure
				}
			}
		case engine.ActClose:
			if dc := c.conns[a.Conn]; dc != nil {
				delete(c.conns, a.Conn)
				dc.cancel()
				if dc.nc != nil {
					dc.nc.Close()
				}
			}
		case engine.ActDone:
			var l *Lock
			if a.Lock != 0 {
				l = c.newLock(a.Lock)
			}
			if ch := c.ops[a.Op]; ch != nil {
				delete(c.ops, a.Op)
				ch <- opResult{lock: l, inspection: a.Inspection, err: a.Err}
			} else if l != nil { // its caller is gone: do not keep it
				c.eng.Forget(a.Lock)
			}
		case engine.ActLost:
			if l := c.locks[a.Lock]; l != nil {
				l.lostBy(a.Err)
			}
		case engine.ActTimer:
			c.timer.Reset(a.Delay)
		case engine.ActClosed:
			close(c.engineClosed)
		}
	}
}

func (c *Client) connect(ctx context.Context, id engine.ConnID, node int, d engine.Dial, dc *driverConn) {
	defer c.wg.Done()
	nc, err := c.dial(ctx, node, &d)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conns[id] != dc { // the engine gave up on it meanwhile
		if nc != nil {
			nc.Close()
		}
		return
	}
	if err != nil {
		c.eng.ConnFailed(id, err)
	} else {
		dc.nc = nc
		c.wg.Add(1)
		go c.read(id, nc)
		c.eng.Opened(id)
	}
	c.drain()
}

// read hands the engine what arrives on one connection until it fails.
func (c *Client) read(id engine.ConnID, nc net.Conn) {
	defer c.wg.Done()
	buf := make([]byte, 4096)
	for {
		n, err := nc.Read(buf)
		c.mu.Lock()
		if n > 0 {
			c.eng.Received(id, buf[:n])
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("connection closed by the node (EOF)")
			}
			c.eng.ConnFailed(id, err)
		}
		c.drain()
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// tick is the driver's one timer.
func (c *Client) tick() {
	c.mu.Lock()
	c.eng.Tick()
	c.drain()
	c.mu.Unlock()
}

// guard runs fn under the driver's lock and carries out what it caused.
func (c *Client) guard(fn func()) {
	c.mu.Lock()
	fn()
	c.drain()
	c.mu.Unlock()
}
