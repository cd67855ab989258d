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
)

// The patterns name the fence script and nothing else the engine sends: the
// SHA is fence.lua's, and the body line occurs in fence.lua only.
func TestFencePatterns(t *testing.T) {
	if faultproxy.FenceSHA != engine.FenceSHA {
		t.Fatalf("FenceSHA %s, engine's %s", faultproxy.FenceSHA, engine.FenceSHA)
	}
	scripts, err := filepath.Glob("../../../engine/*.lua")
	if err != nil || len(scripts) < 5 {
		t.Fatalf("engine scripts: %v %v", scripts, err)
	}
	others := []string{engine.ReleaseSHA, engine.ExtendSHA, engine.AcquireTokenSHA, engine.AcquireFenceSHA, engine.InspectSHA}
	for _, path := range scripts {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(string(src), faultproxy.FenceBody)
		if want := filepath.Base(path) == "fence.lua"; has != want {
			t.Errorf("%s contains %q: %v, want %v", path, faultproxy.FenceBody, has, want)
		}
		if strings.Contains(string(src), faultproxy.FenceSHA) {
			t.Errorf("%s contains the fence SHA", path)
		}
	}
	for _, sha := range others {
		for _, p := range faultproxy.FencePatterns() {
			if strings.Contains(sha, string(p)) {
				t.Errorf("pattern %q matches SHA %s", p, sha)
			}
		}
	}
}

func script(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../../engine/" + name)
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := c.Write(resp(args...)); err != nil {
		t.Fatal(err)
	}
	s, err := c.line(t)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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
	if got := cl.do(t, "PING"); got != "+PONG" {
		t.Fatalf("PING: %q", got)
	}
	// Round one: EVAL with acquire_fence.lua's body, then by its SHA.
	if got := cl.do(t, "EVAL", script(t, "acquire_fence.lua"), "2", "res", engine.FenceKey("res"), "tok", "10000"); got != ":0" {
		t.Fatalf("acquire_fence by EVAL: %q", got)
	}
	if got := cl.do(t, "DEL", "res"); got != ":1" {
		t.Fatalf("DEL: %q", got)
	}
	if got := cl.do(t, "EVALSHA", engine.AcquireFenceSHA, "2", "res", engine.FenceKey("res"), "tok", "10000"); got != ":0" {
		t.Fatalf("acquire_fence by EVALSHA: %q", got)
	}
	if f := p.Fired(); len(f) != 0 {
		t.Fatalf("fired %v on the first round", f)
	}
	if s := state(node.PID()); s == "T" {
		t.Fatal("node stopped on the first round")
	}
	// The fence script's own EVAL (no fault: a first use on the connection
	// would be EVAL, below a second proxy checks that), loading it.
	if _, err := node.Do("SCRIPT", "LOAD", script(t, "fence.lua")); err != nil {
		t.Fatal(err)
	}
	// Round two, the SHA split across two writes (which the proxy may read
	// as one: TestMatcherAcrossChunks covers the split for certain).
	cmd := resp("EVALSHA", engine.FenceSHA, "2", "res", engine.FenceKey("res"), "tok", "1")
	cut := strings.Index(string(cmd), engine.FenceSHA) + 20
	if _, err := cl.Write(cmd[:cut]); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Write(cmd[cut:]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the node stopped", func() bool { return state(node.PID()) == "T" })
	if f := p.Fired(); len(f) != 1 || f[0] != 0 {
		t.Fatalf("fired %v, want [0]", f)
	}
	must(t, node.Thaw())
	// The held command reaches the thawed node.
	if got, err := cl.line(t); err != nil || got != ":1" {
		t.Fatalf("fence after thaw: %q %v", got, err)
	}
	if v, _ := node.Do("GET", engine.FenceKey("res")); v != "1" {
		t.Fatalf("fence counter %q", v)
	}
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
	if got := cl.do(t, "SET", "res", "tok"); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	if _, err := cl.Write(resp("EVAL", script(t, "fence.lua"), "2", "res", engine.FenceKey("res"), "tok", "1")); err != nil {
		t.Fatal(err)
	}
	if got, err := cl.line(t); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("after the kill: %q %v, want the connection closed", got, err)
	}
	if f := p.Fired(); len(f) != 1 {
		t.Fatalf("fired %v", f)
	}
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
		if got := cl.do(t, "SET", "res", "tok"); got != "+OK" {
			t.Fatalf("SET: %q", got)
		}
		for _, args := range [][]string{
			{"EVAL", script(t, "fence.lua"), "2", "res", engine.FenceKey("res"), "tok", strconv.Itoa(2*i + 1)},
			{"EVALSHA", engine.FenceSHA, "2", "res", engine.FenceKey("res"), "tok", strconv.Itoa(2*i + 2)},
		} {
			if got := cl.do(t, args...); got != ":1" {
				t.Fatalf("%s: %q", args[0], got)
			}
		}
		if f := p.Fired(); len(f) != 0 || state(node.PID()) == "T" {
			t.Fatalf("fired %v without a pattern", f)
		}
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
	if _, err := a.Write(cmd); err != nil {
		t.Fatal(err)
	}
	eventually(t, "node 0 stopped", func() bool { return state(c.Nodes[0].PID()) == "T" })
	if got := b.do(t, "EVALSHA", engine.FenceSHA, "2", "res", engine.FenceKey("res"), "tok", "1"); !strings.HasPrefix(got, "-NOSCRIPT") {
		t.Fatalf("node 1: %q, want its answer (NOSCRIPT)", got)
	}
	if f := p.Fired(); len(f) != 1 || f[0] != 0 {
		t.Fatalf("fired %v, want [0]", f)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
