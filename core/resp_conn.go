//go:build !wasip1

package core

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// respConn is one connection to one node. It carries one command at a
// time: a command is written, then its whole reply read, before the
// connection may carry another. Any failure closes it, so a late reply can
// never be taken for the answer to a later command.
type respConn struct {
	nc   net.Conn
	raw  syscall.RawConn // of the TCP or unix socket, for the liveness check
	tls  bool
	r    *bufio.Reader
	wbuf []byte
}

// readBufSize fits every reply the core gets many times over.
const readBufSize = 1024

// dialConn makes a new connection to the node described by opt: one dial
// attempt, then AUTH, SELECT and CLIENT SETNAME as the URL asks, each
// answered before the connection is used. rawURL is only used to keep the
// password out of error messages.
func dialConn(ctx context.Context, opt *redis.Options, rawURL string, deadline time.Time, track func(net.Conn) bool) (*respConn, error) {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	d := net.Dialer{} // Go sets TCP_NODELAY on TCP connections by default
	nc, err := d.DialContext(dctx, opt.Network, opt.Addr)
	if err != nil {
		return nil, err
	}
	if !track(nc) { // ctx ended while we dialed
		nc.Close()
		return nil, context.Cause(ctx)
	}
	cn := &respConn{nc: nc, r: bufio.NewReaderSize(nc, readBufSize)}
	if sc, ok := nc.(syscall.Conn); ok {
		cn.raw, _ = sc.SyscallConn()
	}
	_ = nc.SetDeadline(deadline)
	if opt.TLSConfig != nil {
		tc := tls.Client(nc, opt.TLSConfig.Clone())
		if err := tc.HandshakeContext(dctx); err != nil {
			nc.Close()
			return nil, err
		}
		cn.nc, cn.tls = tc, true
		cn.r.Reset(tc)
	}
	if err := cn.handshake(opt); err != nil {
		cn.close()
		return nil, errors.New(scrub(err.Error(), rawURL))
	}
	return cn, nil
}

// handshake sends the commands a new connection needs before its first
// use, one at a time, each answered before the next: a command must never
// run on a connection whose AUTH or SELECT failed.
func (cn *respConn) handshake(opt *redis.Options) error {
	var steps []Command
	switch {
	case opt.Password != "" && opt.Username != "":
		steps = append(steps, Command{"AUTH", opt.Username, opt.Password})
	case opt.Password != "":
		steps = append(steps, Command{"AUTH", opt.Password})
	}
	if opt.DB != 0 {
		steps = append(steps, Command{"SELECT", strconv.Itoa(opt.DB)})
	}
	if opt.ClientName != "" {
		steps = append(steps, Command{"CLIENT", "SETNAME", opt.ClientName})
	}
	if len(steps) == 0 {
		// The node must answer before the connection carries a command.
		// A frozen node still accepts connections (the kernel does), and
		// a command written to one runs whenever it thaws, long after we
		// gave up on it: a late SET NX would then block the key for its
		// ttl, a late release would delete a key that a retried Release
		// then reports lost. Without this, each timed-out request's fresh
		// connection would queue one more such command; with it, only
		// connections that were idle when the node froze can.
		steps = append(steps, Command{"PING"})
	}
	for _, cmd := range steps {
		if err := cn.write(cmd); err != nil {
			return fmt.Errorf("%s: %w", cmd[0], err)
		}
		r, err := readReply(cn.r)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			return fmt.Errorf("%s refused: %w", cmd[0], err)
		}
	}
	return nil
}

// write sends one command.
func (cn *respConn) write(cmd Command) error {
	cn.wbuf = appendCommand(cn.wbuf[:0], cmd)
	_, err := cn.nc.Write(cn.wbuf)
	if cap(cn.wbuf) > 64<<10 { // do not keep a big script's buffer around
		cn.wbuf = nil
	}
	return err
}

// alive reports whether an idle connection may still be used: the server
// has not closed it (it restarted, or dropped an idle client) and has not
// sent anything unasked. It costs one non-blocking recv.
func (cn *respConn) alive() bool {
	if cn.r.Buffered() > 0 {
		return false
	}
	if cn.raw == nil {
		return true
	}
	ok := true
	var buf [1]byte
	err := cn.raw.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n == 0 && err == nil: // EOF: the server closed it
			ok = false
		case n > 0:
			// Unasked data: out of step, unless it is TLS's own traffic
			// (a session ticket), which the TLS layer reads.
			ok = cn.tls
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
		default:
			ok = false
		}
	})
	return ok && err == nil
}

// pending reports whether some of a reply has arrived: buffered, or
// waiting in the socket.
func (cn *respConn) pending() bool {
	if cn.r.Buffered() > 0 || cn.tls {
		// TLS may hold a decrypted reply in its own buffer: let the
		// read (with its grace) tell.
		return true
	}
	if cn.raw == nil {
		return false
	}
	n := 0
	var buf [1]byte
	_ = cn.raw.Control(func(fd uintptr) {
		n, _, _ = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n > 0
}

// timeoutError is the error of a read that found no reply by the deadline.
func (cn *respConn) timeoutError() error {
	return &net.OpError{Op: "read", Net: cn.nc.LocalAddr().Network(), Source: cn.nc.LocalAddr(), Addr: cn.nc.RemoteAddr(), Err: os.ErrDeadlineExceeded}
}

func (cn *respConn) close() { _ = cn.nc.Close() }
