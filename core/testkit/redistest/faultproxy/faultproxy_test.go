package faultproxy_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/core/testkit/redistest/faultproxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The patterns name the fence script and nothing else the engine sends: the
// SHA is fence.lua's, and the body line occurs in fence.lua only.
func TestFencePatterns(t *testing.T) {
	require.Equal(t, engine.FenceSHA, faultproxy.FenceSHA, "FenceSHA")
	scripts, err := filepath.Glob("../../../engine/*.lua")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(scripts), 5, "engine scripts: %v", scripts)
	others := []string{engine.ReleaseSHA, engine.ExtendSHA, engine.AcquireTokenSHA, engine.AcquireFenceSHA, engine.InspectSHA}
	for _, path := range scripts {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		has := strings.Contains(string(src), faultproxy.FenceBody)
		assert.Equal(t, filepath.Base(path) == "fence.lua", has, "%s contains %q", path, faultproxy.FenceBody)
		assert.NotContains(t, string(src), faultproxy.FenceSHA, "%s contains the fence SHA", path)
	}
	for _, sha := range others {
		for _, p := range faultproxy.FencePatterns() {
			assert.NotContains(t, sha, string(p), "pattern %q matches SHA %s", p, sha)
		}
	}
}

func script(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../../engine/" + name)
	require.NoError(t, err)
	return string(b)
}

func resp(args ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

type conn struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &conn{c, bufio.NewReader(c)}
}

// line reads one reply's first line, with a generous deadline.
func (c *conn) line(t *testing.T) (string, error) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	s, err := c.r.ReadString('\n')
	return strings.TrimRight(s, "\r\n"), err
}

func (c *conn) do(t *testing.T, args ...string) string {
	t.Helper()
	_, err := c.Write(resp(args...))
	require.NoError(t, err)
	s, err := c.line(t)
	require.NoError(t, err, "%v", args)
	return s
}

// state is the process's state letter from /proc (T: stopped).
func state(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// eventually waits up to 10 s for cond (poll.Eventually).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, 10*time.Second, what, cond)
}

func start(t *testing.T, cfg faultproxy.Config) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// The first round's script, by EVAL and EVALSHA, and ordinary commands pass
// without a fault; the fence script's EVALSHA, split across two writes in
// the middle of its SHA, freezes the node before it reaches it.
func TestStopOnFenceRoundOnly(t *testing.T) {
	c := redistest.Start(t, 1)
	node := c.Nodes[0]
	p := start(t, faultproxy.Config{
		Routes:   []faultproxy.Route{{Target: node.Addr(), PID: node.PID()}},
		Patterns: faultproxy.FencePatterns(),
		Signal:   syscall.SIGSTOP,
	})
	t.Cleanup(func() { _ = node.Thaw() })
	cl := dial(t, p.Addrs()[0])
	require.Equal(t, "+PONG", cl.do(t, "PING"), "PING")
	// Round one: EVAL with acquire_fence.lua's body, then by its SHA.
	// No counter yet: it answers the clock floor (TIME in µs).
	floor := func(reply string) bool {
		v, err := strconv.ParseInt(strings.TrimPrefix(reply, ":"), 10, 64)
		return strings.HasPrefix(reply, ":") && err == nil && v > 1_700_000_000_000_000
	}
	r := cl.do(t, "EVAL", script(t, "acquire_fence.lua"), "2", "res", engine.FenceKey("res"), "tok", "10000")
	require.True(t, floor(r), "acquire_fence by EVAL: %s", r)
	require.Equal(t, ":1", cl.do(t, "DEL", "res"), "DEL")
	r = cl.do(t, "EVALSHA", engine.AcquireFenceSHA, "2", "res", engine.FenceKey("res"), "tok", "10000")
	require.True(t, floor(r), "acquire_fence by EVALSHA: %s", r)
	require.Empty(t, p.Fired(), "fired on the first round")
	require.NotEqual(t, "T", state(node.PID()), "node stopped on the first round")
	// The fence script's own EVAL (no fault: a first use on the connection
	// would be EVAL, below a second proxy checks that), loading it.
	_, err := node.Do("SCRIPT", "LOAD", script(t, "fence.lua"))
	require.NoError(t, err)
	// Round two, the SHA split across two writes (which the proxy may read
	// as one: TestMatcherAcrossChunks covers the split for certain).
	cmd := resp("EVALSHA", engine.FenceSHA, "2", "res", engine.FenceKey("res"), "tok", "1")
	cut := strings.Index(string(cmd), engine.FenceSHA) + 20
	_, err = cl.Write(cmd[:cut])
	require.NoError(t, err)
	_, err = cl.Write(cmd[cut:])
	require.NoError(t, err)
	eventually(t, "the node stopped", func() bool { return state(node.PID()) == "T" })
	require.Equal(t, []int{0}, p.Fired(), "the nodes fired")
	must(t, node.Thaw())
	// The held command reaches the thawed node.
	got, err := cl.line(t)
	require.NoError(t, err, "fence after thaw")
	require.Equal(t, ":1", got, "fence after thaw")
	v, _ := node.Do("GET", engine.FenceKey("res"))
	require.Equal(t, "1", v, "fence counter")
}

// The fence script's body by EVAL kills the node: the client's connection
// ends instead of an answer.
func TestKillOnFenceEval(t *testing.T) {
	c := redistest.Start(t, 1)
	node := c.Nodes[0]
	pid := node.PID()
	p := start(t, faultproxy.Config{
		Routes:   []faultproxy.Route{{Target: node.Addr(), PID: pid}},
		Patterns: faultproxy.FencePatterns(),
		Signal:   syscall.SIGKILL,
	})
	cl := dial(t, p.Addrs()[0])
	require.Equal(t, "+OK", cl.do(t, "SET", "res", "tok"), "SET")
	_, err := cl.Write(resp("EVAL", script(t, "fence.lua"), "2", "res", engine.FenceKey("res"), "tok", "1"))
	require.NoError(t, err)
	got, err := cl.line(t)
	require.True(t, errors.Is(err, io.EOF) || isReset(err), "after the kill: %q %v, want the connection closed", got, err)
	require.Len(t, p.Fired(), 1, "fired")
	eventually(t, "the node is gone", func() bool { _, err := node.Do("PING"); return err != nil })
	must(t, node.Restart())
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// The negative control: the same traffic without a pattern, or with a
// pattern nothing sends, never signals.
func TestNoPatternNoFault(t *testing.T) {
	c := redistest.Start(t, 1)
	node := c.Nodes[0]
	for i, pats := range [][][]byte{nil, {[]byte("no such command")}} {
		p := start(t, faultproxy.Config{
			Routes:   []faultproxy.Route{{Target: node.Addr(), PID: node.PID()}},
			Patterns: pats,
			Signal:   syscall.SIGSTOP,
		})
		cl := dial(t, p.Addrs()[0])
		require.Equal(t, "+OK", cl.do(t, "SET", "res", "tok"), "SET")
		for _, args := range [][]string{
			{"EVAL", script(t, "fence.lua"), "2", "res", engine.FenceKey("res"), "tok", strconv.Itoa(2*i + 1)},
			{"EVALSHA", engine.FenceSHA, "2", "res", engine.FenceKey("res"), "tok", strconv.Itoa(2*i + 2)},
		} {
			require.Equal(t, ":1", cl.do(t, args...), args[0])
		}
		require.Empty(t, p.Fired(), "fired without a pattern")
		require.NotEqual(t, "T", state(node.PID()), "stopped without a pattern")
		must(t, p.Close())
	}
}

// Two routes, a budget of one fault: only the first to match is signalled.
func TestFaultBudget(t *testing.T) {
	c := redistest.Start(t, 2)
	var routes []faultproxy.Route
	for _, n := range c.Nodes {
		routes = append(routes, faultproxy.Route{Target: n.Addr(), PID: n.PID()})
		t.Cleanup(func() { _ = n.Thaw() })
	}
	p := start(t, faultproxy.Config{Routes: routes, Patterns: faultproxy.FencePatterns(), Signal: syscall.SIGSTOP, Faults: 1})
	cmd := resp("EVALSHA", engine.FenceSHA, "2", "res", engine.FenceKey("res"), "tok", "1")
	a, b := dial(t, p.Addrs()[0]), dial(t, p.Addrs()[1])
	_, err := a.Write(cmd)
	require.NoError(t, err)
	eventually(t, "node 0 stopped", func() bool { return state(c.Nodes[0].PID()) == "T" })
	got := b.do(t, "EVALSHA", engine.FenceSHA, "2", "res", engine.FenceKey("res"), "tok", "1")
	require.True(t, strings.HasPrefix(got, "-NOSCRIPT"), "node 1: %q, want its answer (NOSCRIPT)", got)
	require.Equal(t, []int{0}, p.Fired(), "the nodes fired")
}

func must(t *testing.T, err error) {
	t.Helper()
	require.NoError(t, err)
}
