//go:build unix

package core

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// canPeek tells whether peek can look at nc: a plain TCP or unix socket.
func canPeek(nc net.Conn) bool {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
		return true
	}
	return false
}

// peek looks at an idle connection without reading it: nil when it is
// open with nothing to read, io.EOF when the node closed it, errPending
// when bytes wait, or the socket's error. One non-blocking recv(MSG_PEEK),
// as go-redis checks a pooled connection before reusing it.
func peek(nc net.Conn) error {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var n int
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	})
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
