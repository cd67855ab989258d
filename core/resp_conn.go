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
	// early holds bytes that readNow took from the socket, in now, for
	// the reply reader to see first.
	early []byte
	now   [64]byte
}

// readBufSize fits every reply the core gets many times over.
const readBufSize = 1024

// dialConn makes a new connection to the node described by opt: one dial
// attempt, then AUTH, SELECT and CLIENT SETNAME as the URL asks, each
// answered before the connection is used. rawURL is only used to keep the
// password out of error messages. g interrupts the handshake when ctx ends.
func dialConn(ctx context.Context, opt *redis.Options, rawURL string, deadline time.Time, g *interrupter) (*respConn, error) {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	d := net.Dialer{} // Go sets TCP_NODELAY on TCP connections by default
	nc, err := d.DialContext(dctx, opt.Network, opt.Addr)
	if err != nil {
		return nil, err
	}
	if !g.track(nc) { // ctx ended while we dialed
		nc.Close()
		return nil, ctx.Err()
	}
	// The caller tracks the connection it gets (cn.nc, maybe TLS) itself.
	defer g.untrack(nc)
	cn := &respConn{nc: nc}
	cn.r = bufio.NewReaderSize(cn, readBufSize)
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

// Read is what the reply reader reads: the bytes readNow took first, then
// the connection.
func (cn *respConn) Read(p []byte) (int, error) {
	if len(cn.early) > 0 {
		n := copy(p, cn.early)
		cn.early = cn.early[n:]
		return n, nil
	}
	return cn.nc.Read(p)
}

// readNow reads what has arrived without waiting, for the reply reader to
// read later: it returns how many bytes (0 at EOF or on an error), or -1
// when nothing has arrived. Plain read(2), not recv(MSG_PEEK): that is
// what valgrind's suppressions for the Go runtime cover (make test-c).
// Only for connections without TLS, whose bytes are its records.
func (cn *respConn) readNow() int {
	n := -1
	err := cn.raw.Control(func(fd uintptr) {
		k, err := syscall.Read(int(fd), cn.now[:])
		switch {
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
		case err != nil:
			n = 0
		default:
			n = k
		}
	})
	if err != nil {
		return 0
	}
	if n > 0 {
		cn.early = cn.now[:n]
	}
	return n
}

// alive reports whether an idle connection may still be used: the server
// has not closed it (it restarted, or dropped an idle client) and has not
// sent anything unasked. It costs one non-blocking read.
func (cn *respConn) alive() bool {
	switch {
	case cn.r.Buffered() > 0 || len(cn.early) > 0:
		return false
	case cn.raw == nil:
		return true
	case cn.tls:
		return cn.peekTLS()
	}
	return cn.readNow() < 0
}

// peekTLS is alive's check under TLS: it must not take bytes from under
// the TLS layer, and bytes that came unasked may be TLS's own (a session
// ticket): only EOF or an error means dead.
func (cn *respConn) peekTLS() bool {
	ok := true
	err := cn.raw.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), cn.now[:1], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0 || err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
		default: // EOF (n == 0, no error) or an error
			ok = false
		}
	})
	return ok && err == nil
}

// pending reports whether some of a reply (or EOF) has arrived: buffered,
// or waiting in the socket.
func (cn *respConn) pending() bool {
	switch {
	case cn.r.Buffered() > 0 || len(cn.early) > 0 || cn.tls:
		// TLS may hold a decrypted reply in its own buffer: let the
		// read (with its grace) tell.
		return true
	case cn.raw == nil:
		return false
	}
	return cn.readNow() >= 0
}

// timeoutError is the error of a read that found no reply by the deadline.
func (cn *respConn) timeoutError() error {
	return &net.OpError{Op: "read", Net: cn.nc.LocalAddr().Network(), Source: cn.nc.LocalAddr(), Addr: cn.nc.RemoteAddr(), Err: os.ErrDeadlineExceeded}
}

func (cn *respConn) close() { _ = cn.nc.Close() }
