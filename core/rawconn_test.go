//go:build unix

package core_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/ownthread"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A one-node Client's connection is a socket outside Go's netpoller once a
// caller on its own thread (the C ABI's blocking calls) has used it, and a
// net.TCPConn for Go callers; either way the pair works and leaves no key.
func TestOneNodeOwnThreadCallersGetRawConns(t *testing.T) {
	c := redistest.Start(t, 1)
	for _, tc := range []struct {
		ctx  context.Context
		want string
	}{
		{context.Background(), "*net.TCPConn"},
		{ownthread.With(context.Background()), "*core.rawConn"},
	} {
		cl, err := core.New(core.Config{Nodes: c.URLs()})
		require.NoError(t, err)
		for range 3 {
			l, err := cl.Acquire(tc.ctx, "raw", 10*time.Second)
			require.NoError(t, err)
			require.NoError(t, l.Release(tc.ctx))
		}
		assert.Equal(t, []string{tc.want}, core.ConnTypes(cl))
		require.NoError(t, cl.Close())
	}
	keys, err := c.Nodes[0].Keys()
	require.NoError(t, err)
	assert.Empty(t, keys)
}

// rawConn: bytes both ways, a read deadline, a Close that ends a read in
// progress at once, a second Close refused, and no descriptor left open.
func TestRawConn(t *testing.T) {
	fds := openFDs(t)
	ln, rc, srv := dialRawPair(t, "tcp", "127.0.0.1:0")

	n, err := rc.Write([]byte("ping"))
	require.NoError(t, err)
	require.Equal(t, 4, n)
	buf := make([]byte, 16)
	_, err = io.ReadFull(srv, buf[:4])
	require.NoError(t, err)
	assert.Equal(t, "ping", string(buf[:4]))
	_, err = srv.Write([]byte("pong"))
	require.NoError(t, err)
	n, err = io.ReadFull(rc, buf[:4])
	require.NoError(t, err)
	assert.Equal(t, "pong", string(buf[:n]))

	require.NoError(t, rc.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	_, err = rc.Read(buf)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, rc.SetReadDeadline(time.Time{}))

	read := make(chan error, 1)
	go func() {
		_, err := rc.Read(buf)
		read <- err
	}()
	require.True(t, poll.Wait(5*time.Second, func() bool {
		b := make([]byte, 1<<20)
		return strings.Contains(string(b[:runtime.Stack(b, true)]), "(*rawConn).wait(")
	}), "the read never waited")
	require.NoError(t, rc.Close())
	select {
	case err := <-read:
		assert.Error(t, err, "a read in progress ends when the connection is closed")
	case <-time.After(5 * time.Second):
		t.Fatal("a read in progress did not end when the connection was closed")
	}
	assert.ErrorIs(t, rc.Close(), net.ErrClosed)
	_, err = rc.Write([]byte("x"))
	assert.ErrorIs(t, err, net.ErrClosed)
	require.NoError(t, srv.Close())
	require.NoError(t, ln.Close())
	assert.True(t, poll.Wait(5*time.Second, func() bool { return openFDs(t) <= fds }),
		"descriptors open: %d, before: %d", openFDs(t), fds)
}

// A unix socket works the same; the peer sees the close.
func TestRawConnUnix(t *testing.T) {
	_, rc, srv := dialRawPair(t, "unix", filepath.Join(t.TempDir(), "s"))
	_, err := rc.Write([]byte("hi"))
	require.NoError(t, err)
	buf := make([]byte, 2)
	_, err = io.ReadFull(srv, buf)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	_, err = srv.Read(buf)
	assert.True(t, errors.Is(err, io.EOF), "the peer reads EOF: %v", err)
}

// dialRawPair listens on addr, dials it with a rawConn and returns the
// listener, the rawConn and the accepted end; the listener and the
// accepted end are closed when the test ends.
func dialRawPair(t *testing.T, network, addr string) (net.Listener, net.Conn, net.Conn) {
	ln, err := net.Listen(network, addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := ln.Accept()
		if err == nil {
			accepted <- s
		}
	}()
	rc, err := core.DialRaw(context.Background(), network, ln.Addr().String())
	require.NoError(t, err)
	srv := <-accepted
	t.Cleanup(func() { _ = srv.Close() })
	return ln, rc, srv
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}
