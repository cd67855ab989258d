//go:build unix

package core

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// rawConn is a plain TCP or unix socket that Go's netpoller never watches:
// its reads and writes wait in poll(2) on the calling thread. A reply then
// wakes only the thread that waits for it, where a socket in the
// runtime's epoll set also wakes the runtime's poller thread, which on a
// C caller's blocking call has nothing to do with it. Close shuts the
// socket down, which ends every wait at once, and closes the descriptor
// when the last call in progress returns.
type rawConn struct {
	mu       sync.Mutex
	fd       int
	users    int // calls in progress
	closed   bool
	rdl, wdl time.Time
	local    net.Addr
	remote   net.Addr
}

// dialRaw connects like net.Dialer.DialContext, bounded by ctx, and hands
// the socket over as a rawConn: the net package's descriptor is duplicated
// (close-on-exec, non-blocking like the original) and its own closed, so
// the runtime's epoll set never holds the new one.
func dialRaw(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc, ok := nc.(syscall.Conn)
	if !ok { // not a socket dialRaw knows: keep the net package's
		return nc, nil
	}
	defer nc.Close()
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return &rawConn{fd: fd, local: nc.LocalAddr(), remote: nc.RemoteAddr()}, nil
}

func (c *rawConn) enter() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return -1, net.ErrClosed
	}
	c.users++
	return c.fd, nil
}

func (c *rawConn) leave() {
	c.mu.Lock()
	c.users--
	last := c.closed && c.users == 0
	c.mu.Unlock()
	if last {
		_ = unix.Close(c.fd)
	}
}

func (c *rawConn) deadline(write bool) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if write {
		return c.wdl
	}
	return c.rdl
}

// wait polls fd for ev until the deadline (none: zero), in slices of
// pollSlice so that a Close from another thread is noticed even where
// shutdown(2) does not wake poll.
func (c *rawConn) wait(fd int, ev int16, dl time.Time) error {
	for {
		ms := pollSlice
		if !dl.IsZero() {
			left := time.Until(dl)
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			if l := int(left / time.Millisecond); l < ms {
				ms = max(l, 1)
			}
		}
		pfd := [1]unix.PollFd{{Fd: int32(fd), Events: ev}}
		n, err := unix.Poll(pfd[:], ms)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		if n > 0 && pfd[0].Revents != 0 {
			return nil
		}
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return net.ErrClosed
		}
	}
}

func (c *rawConn) Read(b []byte) (n int, err error) {
	werr := rawFD{c}.until(func(fd uintptr) bool {
		for {
			n, err = syscall.Read(int(fd), b)
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EAGAIN):
				return false // wait for bytes
			case err == nil && n == 0 && len(b) > 0:
				err = io.EOF
			case err != nil:
				n = 0
			}
			return true
		}
	}, false)
	if werr != nil {
		return 0, werr
	}
	return n, err
}

func (c *rawConn) Write(b []byte) (done int, err error) {
	werr := rawFD{c}.until(func(fd uintptr) bool {
		for done < len(b) {
			n, e := syscall.Write(int(fd), b[done:])
			if n > 0 {
				done += n
			}
			switch {
			case e == nil || errors.Is(e, syscall.EINTR):
			case errors.Is(e, syscall.EAGAIN):
				return false // wait for room
			default:
				err = e
				return true
			}
		}
		return true
	}, true)
	if werr != nil {
		return done, werr
	}
	return done, err
}

func (c *rawConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return net.ErrClosed
	}
	c.closed = true
	// Under mu: the descriptor is closed by whoever finds closed set and
	// no call in progress, so it is still this socket's here.
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR) // wakes a wait in progress
	last := c.users == 0
	c.mu.Unlock()
	if last {
		return unix.Close(c.fd)
	}
	return nil
}

func (c *rawConn) LocalAddr() net.Addr  { return c.local }
func (c *rawConn) RemoteAddr() net.Addr { return c.remote }

func (c *rawConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl, c.wdl = t, t
	c.mu.Unlock()
	return nil
}

func (c *rawConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl = t
	c.mu.Unlock()
	return nil
}

func (c *rawConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	return nil
}

// SyscallConn gives peek and readPolling the descriptor.
func (c *rawConn) SyscallConn() (syscall.RawConn, error) { return rawFD{c}, nil }

type rawFD struct{ c *rawConn }

func (r rawFD) Control(f func(fd uintptr)) error {
	fd, err := r.c.enter()
	if err != nil {
		return err
	}
	defer r.c.leave()
	f(uintptr(fd))
	return nil
}

func (r rawFD) Read(f func(fd uintptr) bool) error  { return r.until(f, false) }
func (r rawFD) Write(f func(fd uintptr) bool) error { return r.until(f, true) }

// until calls f until it reports done, waiting for the socket to be
// readable (or writable) between calls, as syscall.RawConn promises.
func (r rawFD) until(f func(fd uintptr) bool, write bool) error {
	fd, err := r.c.enter()
	if err != nil {
		return err
	}
	defer r.c.leave()
	ev := int16(unix.POLLIN)
	if write {
		ev = unix.POLLOUT
	}
	for !f(uintptr(fd)) {
		if err := r.c.wait(fd, ev, r.c.deadline(write)); err != nil {
			return err
		}
	}
	return nil
}
