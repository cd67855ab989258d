package hostabitest

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/stretchr/testify/require"
)

// Engine is what a host drives: *engine.Engine, *hostabi.Adapter, or the
// wazero adapter — the Go driver's interface.
type Engine = core.Engine

// Done is an operation's outcome.
type Done struct {
	Lock engine.LockID
	Err  error
}

type event struct {
	conn engine.ConnID
	c    net.Conn // the connection, once dialed
	data []byte
	err  error
}

// Host runs one engine. Its methods must be called from one goroutine.
type Host struct {
	tb     testing.TB
	E      Engine
	conns  map[engine.ConnID]net.Conn
	events chan event
	timer  *time.Timer
	done   map[engine.OpID]Done
	Lost   map[engine.LockID]error
	Closed bool
}

// New returns a host for e; Close ends it (closing every connection).
func New(tb testing.TB, e Engine) *Host {
	h := &Host{tb: tb, E: e, conns: map[engine.ConnID]net.Conn{}, events: make(chan event, 64),
		timer: time.NewTimer(time.Hour), done: map[engine.OpID]Done{}, Lost: map[engine.LockID]error{}}
	h.timer.Stop()
	tb.Cleanup(h.shutdown)
	return h
}

func (h *Host) shutdown() {
	for _, c := range h.conns {
		_ = c.Close()
	}
	h.conns = map[engine.ConnID]net.Conn{}
	h.timer.Stop()
}

// drain carries out every pending action.
func (h *Host) drain() {
	for {
		a, ok := h.E.Next()
		if !ok {
			return
		}
		switch a.Kind {
		case engine.ActOpen:
			go h.dial(a.Conn, a.Dial)
		case engine.ActWrite:
			if c := h.conns[a.Conn]; c != nil {
				if _, err := c.Write(a.Data); err != nil {
					go func(id engine.ConnID) { h.events <- event{conn: id, err: err} }(a.Conn)
				}
			}
		case engine.ActClose:
			if c := h.conns[a.Conn]; c != nil {
				_ = c.Close()
				delete(h.conns, a.Conn)
			}
		case engine.ActDone:
			h.done[a.Op] = Done{a.Lock, a.Err}
		case engine.ActLost:
			h.Lost[a.Lock] = a.Err
		case engine.ActTimer:
			h.timer.Reset(a.Delay)
		case engine.ActClosed:
			h.Closed = true
		}
	}
}

func (h *Host) dial(id engine.ConnID, d *engine.Dial) {
	c, err := net.DialTimeout(d.Network, d.Addr, 5*time.Second)
	if err != nil {
		h.events <- event{conn: id, err: err}
		return
	}
	h.events <- event{conn: id, c: c}
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			h.events <- event{conn: id, data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			h.events <- event{conn: id, err: err}
			return
		}
	}
}

// Run processes events until cond holds or the deadline passes; cond is
// checked after every event and at least every 2 ms.
func (h *Host) Run(cond func() bool, within time.Duration) bool {
	h.drain()
	deadline := time.After(within)
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	for !cond() {
		select {
		case <-poll.C:
		case ev := <-h.events:
			h.handle(ev)
		case <-h.timer.C:
			h.E.Tick()
		case <-deadline:
			return false
		}
		h.drain()
	}
	return true
}

var errClosedByNode = errors.New("connection closed by the node")

func (h *Host) handle(ev event) {
	switch {
	case ev.c != nil:
		h.conns[ev.conn] = ev.c
		h.E.Opened(ev.conn) // may answer CLOSE at once: drain closes it
	case ev.err != nil:
		if errors.Is(ev.err, net.ErrClosed) {
			return // the engine had it closed
		}
		if c := h.conns[ev.conn]; c != nil {
			_ = c.Close()
			delete(h.conns, ev.conn)
		}
		err := ev.err
		if errors.Is(err, io.EOF) {
			err = errClosedByNode
		}
		h.E.ConnFailed(ev.conn, err)
	default:
		if _, ok := h.conns[ev.conn]; ok {
			h.E.Received(ev.conn, ev.data)
		}
	}
}

// Wait runs until op is done and returns its outcome; it fails the test
// after 10 s.
func (h *Host) Wait(op engine.OpID) Done {
	h.tb.Helper()
	require.True(h.tb, h.Run(func() bool { _, ok := h.done[op]; return ok }, 10*time.Second), "operation %d did not end within 10 s", op)
	d := h.done[op]
	delete(h.done, op)
	return d
}

// Acquire runs an acquire to its end.
func (h *Host) Acquire(r engine.AcquireRequest) Done {
	h.tb.Helper()
	op, err := h.E.Acquire(r)
	if err != nil {
		return Done{Err: err}
	}
	return h.Wait(op)
}

// Release runs a release to its end.
func (h *Host) Release(l engine.LockID) Done {
	h.tb.Helper()
	op, err := h.E.Release(l)
	if err != nil {
		return Done{Err: err}
	}
	return h.Wait(op)
}

// Shutdown closes the engine and waits for CLOSED.
func (h *Host) Shutdown() {
	h.tb.Helper()
	h.E.Close()
	require.True(h.tb, h.Run(func() bool { return h.Closed }, 10*time.Second), "engine did not close within 10 s")
}
