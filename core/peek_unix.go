//go:build unix

package core

import (
	"errors"
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// canPeek tells whether peek can look at nc: a plain TCP or unix socket.
func canPeek(nc net.Conn) bool {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn, *rawConn:
		return true
	}
	return false
}

// peeker looks at one idle connection without reading it (peek). One is
// made per connection, the first time it is looked at, so that a look
// allocates nothing: the descriptor's RawConn and the function handed to
// it are kept.
type peeker struct {
	rc   syscall.RawConn
	err  error // SyscallConn's, when it failed
	n    int
	rerr error
	b    [1]byte
	look func(fd uintptr) bool
}

func newPeeker(nc net.Conn) *peeker {
	p := &peeker{}
	p.look = p.recv
	if sc, ok := nc.(syscall.Conn); ok {
		p.rc, p.err = sc.SyscallConn()
	}
	return p
}

func (p *peeker) recv(fd uintptr) bool {
	p.n, _, p.rerr = syscall.Recvfrom(int(fd), p.b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return true
}

// peek: nil when the connection is open with nothing to read, io.EOF when
// the node closed it, errPending when bytes wait, or the socket's error.
// One non-blocking recv(MSG_PEEK), as go-redis checks a pooled connection
// before reusing it.
func (p *peeker) peek() error {
	if p.err != nil {
		return p.err
	}
	if p.rc == nil {
		return nil
	}
	p.n, p.rerr = 0, nil
	err := p.rc.Read(p.look)
	n, perr := p.n, p.rerr
	switch {
	case err != nil:
		return err
	case errors.Is(perr, syscall.EAGAIN) || errors.Is(perr, syscall.EWOULDBLOCK) || errors.Is(perr, syscall.EINTR):
		return nil
	case perr != nil:
		return perr
	case n == 0:
		return io.EOF
	}
	return errPending
}

// pollSlice bounds each wait of readPolling: a connection closed meanwhile
// (the engine gave up on the node, the client closes) waits for the wait to
// end, since closing a net.Conn waits for the reads in progress.
const pollSlice = 2 // ms

// readPolling reads a plain TCP or unix socket on the calling thread: it
// waits for bytes in a poll(2) of its own, at most pollSlice, then reads
// them, where nc.Read would park the goroutine on Go's netpoller. It is
// the wait of a caller on a thread Go did not create (ownthread: the C
// ABI's blocking calls), whose goroutine is locked to that thread: on the
// netpoller, one M wakes from epoll_wait only to hand the goroutine to the
// caller's thread; in poll the kernel wakes the caller's thread directly.
// A Go caller waits on the netpoller (readNetpoller). (0, nil) means
// nothing came within the slice: look again.
func readPolling(nc net.Conn, buf []byte) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc.Read(buf)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	eof := false
	err = rc.Read(func(fd uintptr) bool {
		pfd := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, perr := unix.Poll(pfd[:], pollSlice); perr != nil {
			if !errors.Is(perr, unix.EINTR) {
				rerr = perr
			}
			return true
		}
		if pfd[0].Revents == 0 {
			return true // nothing yet
		}
		n, rerr = syscall.Read(int(fd), buf)
		switch {
		case errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EINTR):
			n, rerr = 0, nil
		case rerr == nil && n == 0:
			eof = true
		case n < 0:
			n = 0
		}
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case eof:
		return 0, io.EOF
	}
	return n, nil
}
