package core

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
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

// awaiter is an Engine that tells which connections it expects bytes on
// (*engine.Engine does, and wasm/host's Engine for a one-node client).
// With it, the driver of a one-node Client reads a reply on the goroutine
// of the caller that waits for it, as go-redis does, instead of handing it
// over from a reader goroutine: a goroutine wake-up less per round trip. A
// connection nobody waits on is then left unread until the engine awaits
// bytes on it again.
type awaiter interface {
	Awaiting(engine.ConnID) bool
}

// dialFunc opens a connection for the engine's ActOpen.
type dialFunc func(ctx context.Context, node int, d *engine.Dial) (net.Conn, error)

// dialNode is the driver's own dial: TCP or a unix socket, then TLS when the
// engine asks for it. Go sets TCP_NODELAY by default.
func dialNode(ctx context.Context, node int, d *engine.Dial) (net.Conn, error) {
	return dialTLS(nil, nil)(ctx, node, d)
}

// dialTLS is dialNode with base as every TLS connection's settings
// (Config.TLS; nil: the system's roots): a clone of it, its ServerName the
// engine's (the URL's host) unless base sets one, verification off when the
// URL says skip_verify=true.
// A node in perNode (Config.NodeTLS) has its entry instead of base.
func dialTLS(base *tls.Config, perNode map[int]*tls.Config) dialFunc {
	return func(ctx context.Context, node int, d *engine.Dial) (net.Conn, error) {
		var nd net.Dialer
		nc, err := nd.DialContext(ctx, d.Network, d.Addr)
		if err != nil || !d.TLS {
			return nc, err
		}
		b := base
		if t, ok := perNode[node]; ok {
			b = t
		}
		tc := tls.Client(nc, tlsConfig(b, d))
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		return tc, nil
	}
}

func tlsConfig(base *tls.Config, d *engine.Dial) *tls.Config {
	var cfg *tls.Config
	if base == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		cfg = base.Clone()
		if cfg.MinVersion == 0 {
			cfg.MinVersion = tls.VersionTLS12
		}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = d.ServerName
	}
	if d.SkipVerify {
		cfg.InsecureSkipVerify = true //nolint:gosec // skip_verify is the user's explicit choice
	}
	return cfg
}

// driverConn is one connection the engine asked for.
type driverConn struct {
	nc     net.Conn // nil while dialing
	cancel context.CancelFunc
	// reading: a goroutine owns reads of nc, its reader goroutine or a
	// caller reading inline (Client.inline). At most one at a time.
	reading bool
	// pinned: read by its reader goroutine for its whole life (Client
	// inline, but peek cannot look at it: TLS).
	pinned bool
	buf    []byte  // the inline reader's buffer (inlineBuf)
	peeker *peeker // looks at nc while it is idle (checkIdle), made at the first look
	// werr: a write failed (c.mu held to set and read it).
	werr error
}

// writeFailed ends a connection a write failed on. A plain one is closed:
// its reader reports the failure. A TLS one is left to its reader for up
// to timeout: a TLS 1.3 server that refuses the client's certificate (or
// the lack of one) says so in an alert after the handshake, which only a
// read sees, and which is the cause worth reporting, not the write's
// broken pipe.
func (dc *driverConn) writeFailed(err error, timeout time.Duration) {
	dc.werr = err
	if _, ok := dc.nc.(*tls.Conn); ok {
		_ = dc.nc.SetReadDeadline(time.Now().Add(timeout))
		return
	}
	dc.nc.Close()
}

// cause is what a read's err says, or the failed write's error when the
// read only saw the connection closed or timed out; c.mu is held.
func (dc *driverConn) cause(err error) error {
	if dc.werr != nil && (errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded)) {
		return dc.werr
	}
	return err
}

// unread tells whether the engine awaits bytes on the open connection dc
// that nobody reads (Client.inline); c.mu is held.
func (c *Client) unread(id engine.ConnID, dc *driverConn) bool {
	return dc.nc != nil && !dc.reading && c.inline.Awaiting(id)
}

type opResult struct {
	lock       *Lock
	inspection *engine.Inspection
	err        error
}

// drain carries out every action the engine has, then gives every
// connection the engine awaits bytes on a reader; c.mu is held.
func (c *Client) drain() {
	c.carryOut()
	if c.inline != nil {
		c.startReaders()
	}
}

// startReaders starts a reader goroutine for each open connection the
// engine awaits bytes on that nobody reads (Client.inline only); c.mu is
// held.
func (c *Client) startReaders() {
	for id, dc := range c.conns {
		if c.unread(id, dc) {
			dc.reading = true
			c.wg.Add(1)
			go c.read(id, dc)
		}
	}
}

// carryOut carries out every action the engine has; c.mu is held.
func (c *Client) carryOut() {
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
			// A one-node client's callers on their own threads read their
			// replies themselves: a socket outside Go's netpoller (rawConn)
			// then wakes only them.
			raw := c.rawDial && c.ownThread && c.inline != nil && !a.Dial.TLS
			go c.connect(ctx, a.Conn, a.Node, *a.Dial, dc, raw)
		case engine.ActWrite:
			if dc := c.conns[a.Conn]; dc != nil && dc.nc != nil {
				_ = dc.nc.SetWriteDeadline(time.Now().Add(c.timeout))
				if _, err := dc.nc.Write(a.Data); err != nil {
					dc.writeFailed(err, c.timeout) // its reader reports the failure
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
		case engine.ActReport:
			if c.tel != nil {
				c.tel.report(a, c.lockResource)
			}
			if c.reports != nil {
				c.handReport(a) // reports.go
			}
		case engine.ActLeader:
			c.observed(a) // election.go
		case engine.ActDone:
			if c.tel != nil {
				c.tel.done(a)
			}
			if c.reportTags != nil {
				delete(c.reportTags, a.Op)
			}
			if c.observers != nil && c.observed(a) {
				continue // a watch ended
			}
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
			if l := c.locks[a.Lock]; l != nil && l.lostBy(a.Err) {
				c.warnLost(l, a.Err)
			}
		case engine.ActTimer:
			c.timer.Reset(a.Delay)
		case engine.ActClosed:
			close(c.engineClosed)
		}
	}
}

func (c *Client) connect(ctx context.Context, id engine.ConnID, node int, d engine.Dial, dc *driverConn, raw bool) {
	defer c.wg.Done()
	var nc net.Conn
	var err error
	if raw {
		nc, err = dialRaw(ctx, d.Network, d.Addr)
	} else {
		nc, err = c.dial(ctx, node, &d)
	}
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
		if c.inline == nil || !canPeek(nc) {
			dc.reading, dc.pinned = true, true
			c.wg.Add(1)
			go c.read(id, dc)
		}
		c.eng.Opened(id) // Client.inline: drain starts a reader for the handshake
	}
	c.drain()
}

// read hands the engine what arrives on one connection until it fails or,
// with Client.inline, until the engine awaits nothing more on it.
func (c *Client) read(id engine.ConnID, dc *driverConn) {
	defer c.wg.Done()
	buf := make([]byte, 4096)
	for {
		n, err := dc.nc.Read(buf)
		c.mu.Lock()
		if err != nil {
			err = dc.cause(err)
		}
		c.deliver(id, buf[:n], err)
		idle := err == nil && !dc.pinned && c.conns[id] == dc && !c.inline.Awaiting(id)
		if idle {
			dc.reading = false // the next command's caller reads its reply
		}
		c.mu.Unlock()
		if err != nil || idle {
			return
		}
	}
}

// deliver hands the engine what a read returned and carries out what it
// caused; c.mu is held.
func (c *Client) deliver(id engine.ConnID, p []byte, err error) {
	c.report(id, p, err)
	c.drain()
}

// report hands the engine what a read (or a peek) returned: the bytes,
// then the failure, if any; c.mu is held.
func (c *Client) report(id engine.ConnID, p []byte, err error) {
	if len(p) > 0 {
		c.eng.Received(id, p)
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("connection closed by the node (EOF)")
		}
		c.eng.ConnFailed(id, err)
	}
}

// claim makes the calling goroutine the reader of the connection the
// engine awaits bytes on that nobody reads (the one node's command
// connection, after the caller's command went out on it); c.mu is held.
func (c *Client) claim() (engine.ConnID, *driverConn) {
	if c.inline == nil {
		return 0, nil
	}
	for id, dc := range c.conns {
		if c.unread(id, dc) {
			dc.reading = true
			return id, dc
		}
	}
	return 0, nil
}

// readInline reads the connection id on the caller's goroutine until the
// caller's outcome is in ch (returned, true), the engine awaits nothing
// more on it (a failed attempt backing off: false), or it fails (false).
// The connection is then handed to a reader goroutine if the engine still
// awaits bytes on it. Each read is bounded by the engine: a node that does
// not answer within the node timeout has its connection closed. read is
// how the caller waits for bytes: readNetpoller or readPolling.
func (c *Client) readInline(id engine.ConnID, dc *driverConn, ch chan opResult, read func(net.Conn, []byte) (int, error)) (opResult, bool) {
	buf := dc.inlineBuf()
	stop := false
	for {
		var r opResult
		got := false
		select {
		case r = <-ch:
			got = true
		default:
		}
		if got || stop {
			c.mu.Lock()
			dc.reading = false
			if c.conns[id] == dc {
				c.startReaders() // late replies, or replies other callers wait for
			}
			c.mu.Unlock()
			return r, got
		}
		n, err := read(dc.nc, buf)
		c.mu.Lock()
		mine := c.conns[id] == dc
		if mine && (n > 0 || err != nil) {
			if err != nil {
				err = dc.cause(err)
			}
			c.deliver(id, buf[:n], err)
		}
		stop = err != nil || !mine || !c.inline.Awaiting(id)
		c.mu.Unlock()
	}
}

// skipCheckIdle turns checkIdle off: a test's negative control only.
var skipCheckIdle bool

// checkIdle looks at each connection left unread while the engine awaited
// nothing on it, before a command goes out: one the node closed meanwhile
// (a restart, an idle timeout) is reported to the engine now, which opens
// a new one for the command, as a reader goroutine would have noticed the
// close at once; bytes nobody asked for are handed to the engine, which
// drops the connection. c.mu is held.
func (c *Client) checkIdle() {
	for id, dc := range c.conns {
		if dc.nc == nil || dc.reading {
			continue
		}
		if dc.peeker == nil {
			dc.peeker = newPeeker(dc.nc)
		}
		switch err := dc.peeker.peek(); {
		case err == nil: // open, nothing waiting
		case errors.Is(err, errPending): // does not block: bytes wait
			buf := dc.inlineBuf()
			n, rerr := dc.nc.Read(buf)
			c.report(id, buf[:n], rerr)
		default:
			c.report(id, nil, err)
		}
	}
	c.carryOut()
}

// errPending is peek's answer when bytes wait on a connection nobody asked
// anything of.
var errPending = errors.New("unexpected bytes on an idle connection")

// readNetpoller is a plain read: the goroutine parks on Go's netpoller,
// where the M that wakes in epoll_wait runs it at once (no hand-off to
// another thread), and a close of the connection ends the wait at once.
func readNetpoller(nc net.Conn, buf []byte) (int, error) { return nc.Read(buf) }

// inlineBuf is the buffer a caller reads dc into.
func (dc *driverConn) inlineBuf() []byte {
	if dc.buf == nil {
		dc.buf = make([]byte, 4096)
	}
	return dc.buf
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

// warnLost logs a lock's loss at Warn: to Config.Logger, else to
// slog.Default(), so that a loss is never silent by default (a process
// that set up no logging gets it on stderr, as it gets any slog warning).
// The error's text is the engine's, the same in every language: the
// resource and the reason ("held on at most 1 of 3 nodes (2 answered it is
// gone), quorum is 2"). c.mu is held: the handler runs on the driver's
// goroutine, as every log line of the Client does.
func (c *Client) warnLost(l *Lock, err error) {
	log := c.logger
	if log == nil {
		log = slog.Default()
	}
	log.Warn("liblock: lock lost", "resource", l.resource, "error", err.Error())
}

// lockResource is the resource of a lock the Client holds ("" for one it
// does not know); c.mu is held.
func (c *Client) lockResource(id engine.LockID) string {
	if l := c.locks[id]; l != nil {
		return l.resource
	}
	return ""
}
