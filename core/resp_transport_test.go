//go:build !wasip1

package core_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/locktest"
	"github.com/liblock/liblock/core/redistest"
)

// The transport tests drive core.New's RESP transport directly, against
// real redis-servers, including frozen, killed and restarted ones.

func newTransport(t *testing.T, urls []string, timeout time.Duration) core.Transport {
	t.Helper()
	tr, err := core.NewRespTransport(urls, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// all is one command for every node.
func all(n int, cmd ...string) []core.Command {
	cmds := make([]core.Command, n)
	for i := range cmds {
		cmds[i] = cmd
	}
	return cmds
}

// wantEcho checks that every node in want answered ECHO with its word.
func wantEcho(t *testing.T, replies []core.Reply, nodes []int, word string) {
	t.Helper()
	for _, i := range nodes {
		if r := replies[i]; r.Err != nil || r.Str != word {
			t.Fatalf("node %d: got %+v, want %q", i, r, word)
		}
	}
}

// TestRespConcurrentExec: many goroutines share one transport; every reply
// must be the answer to its own command (integer, nil, status, bulk and
// error replies mixed), never another goroutine's.
func TestRespConcurrentExec(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	tr := newTransport(t, c.URLs(), 5*time.Second)
	ctx := context.Background()
	const workers, rounds = 16, 60
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				tag := fmt.Sprintf("w%d-r%d", w, r)
				cmds := make([]core.Command, 3)
				// A different mix of nodes each round, some skipped.
				for i := range cmds {
					if (w+r+i)%4 == 3 {
						continue
					}
					switch (r + i) % 4 {
					case 0:
						cmds[i] = core.Command{"ECHO", tag + fmt.Sprint(i)}
					case 1:
						cmds[i] = core.Command{"SET", "k:" + tag, tag, "NX", "PX", "60000"}
					case 2:
						cmds[i] = core.Command{"INCRBY", "n:" + tag, fmt.Sprint(i + 1)}
					case 3:
						cmds[i] = core.Command{"EVALSHA", "0000000000000000000000000000000000000000", "1", tag}
					}
				}
				for attempt := range 2 { // the second SET NX finds the key
					replies := tr.Exec(ctx, cmds)
					for i, cmd := range cmds {
						got := replies[i]
						var ok bool
						switch {
						case cmd == nil:
							ok = got == core.Reply{}
						case cmd[0] == "ECHO":
							ok = got.Err == nil && got.Str == cmd[1]
						case cmd[0] == "SET" && attempt == 0:
							ok = got.Err == nil && got.Str == "OK" && !got.Nil
						case cmd[0] == "SET":
							ok = got.Err == nil && got.Nil
						case cmd[0] == "INCRBY":
							ok = got.Err == nil && got.Int == int64((i+1)*(attempt+1))
						case cmd[0] == "EVALSHA":
							ok = got.Err != nil && strings.HasPrefix(got.Err.Error(), "NOSCRIPT")
						}
						if !ok {
							t.Errorf("%s node %d attempt %d: %v got %+v", tag, i, attempt, cmd, got)
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	idle, open, _ := core.ConnCounts(tr)
	for i := range idle {
		if idle[i] < 1 || idle[i] > core.MaxConnsPerNode || open[i] != idle[i] {
			t.Errorf("node %d keeps %d idle connections of %d open, want 1..%d, all idle", i, idle[i], open[i], core.MaxConnsPerNode)
		}
	}
	if err := c.FlushAll(); err != nil {
		t.Fatal(err)
	}
}

// TestRespFrozenNodes: frozen nodes cost the deadline once, not once each;
// their connections are thrown away, so after a thaw their late replies
// are never read as the answer to a later command.
func TestRespFrozenNodes(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 5)
	const timeout = 400 * time.Millisecond
	tr := newTransport(t, c.URLs(), timeout)
	ctx := context.Background()
	wantEcho(t, tr.Exec(ctx, all(5, "ECHO", "warm")), []int{0, 1, 2, 3, 4}, "warm")
	for _, n := range c.Nodes[:4] {
		if err := n.Freeze(); err != nil {
			t.Fatal(err)
		}
	}
	// Node order matters: the live node is read last, after four frozen
	// ones; nodes read one by one would take four deadlines.
	start := time.Now()
	replies := tr.Exec(ctx, all(5, "ECHO", "stale"))
	if took := time.Since(start); took > timeout+locktest.Bound {
		t.Errorf("Exec with 4 frozen nodes took %v; one deadline is %v", took, timeout)
	}
	for i := range 4 {
		var ne interface{ Timeout() bool }
		if err := replies[i].Err; !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("frozen node %d: got %+v, want a timeout", i, replies[i])
		}
	}
	wantEcho(t, replies, []int{4}, "stale")
	if _, open, _ := core.ConnCounts(tr); open[0]+open[1]+open[2]+open[3] != 0 {
		t.Errorf("timed-out connections kept: %v open", open)
	}
	// A request while they are still frozen goes over new connections,
	// which must not carry it before the node has answered: a frozen node
	// runs what it was sent whenever it thaws.
	replies = tr.Exec(ctx, all(5, "SET", "late", "v", "NX", "PX", "60000"))
	for i := range 4 {
		if replies[i].Err == nil {
			t.Errorf("frozen node %d answered %+v", i, replies[i])
		}
	}
	for _, n := range c.Nodes[:4] {
		if err := n.Thaw(); err != nil {
			t.Fatal(err)
		}
	}
	// The thawed nodes now answer "stale" on connections we closed.
	wantEcho(t, tr.Exec(ctx, all(5, "ECHO", "fresh")), []int{0, 1, 2, 3, 4}, "fresh")
	wantEcho(t, tr.Exec(ctx, all(5, "ECHO", "again")), []int{0, 1, 2, 3, 4}, "again")
	for _, n := range c.Nodes[:4] {
		if v, err := n.Do("EXISTS", "late"); err != nil || v != "0" {
			t.Errorf("node %d ran the SET sent while it was frozen (EXISTS %q, %v)", n.Index, v, err)
		}
	}
}

// TestRespFrozenNodeWithContextDeadline: when the caller's context ends at
// the node timeout (the wasm host bounds each exchange that way), a frozen
// node read first must not cost the others their replies: the context's
// deadline is a deadline, not a cancellation.
func TestRespFrozenNodeWithContextDeadline(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	const timeout = 200 * time.Millisecond
	tr := newTransport(t, c.URLs(), timeout)
	wantEcho(t, tr.Exec(context.Background(), all(3, "ECHO", "warm")), []int{0, 1, 2}, "warm")
	if err := c.Nodes[0].Freeze(); err != nil {
		t.Fatal(err)
	}
	defer c.Nodes[0].Thaw()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	replies := tr.Exec(ctx, all(3, "ECHO", "live"))
	if replies[0].Err == nil {
		t.Errorf("frozen node 0 answered %+v", replies[0])
	}
	wantEcho(t, replies, []int{1, 2}, "live")
}

// TestRespKilledAndRestarted: a dead node is refused at once; a restarted
// one is reconnected to without a failed request.
func TestRespKilledAndRestarted(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	tr := newTransport(t, c.URLs(), 5*time.Second)
	ctx := context.Background()
	wantEcho(t, tr.Exec(ctx, all(3, "ECHO", "warm")), []int{0, 1, 2}, "warm")

	// Restart under live, idle connections: they are found closed and
	// replaced before use.
	if err := c.Nodes[0].Restart(); err != nil {
		t.Fatal(err)
	}
	wantEcho(t, tr.Exec(ctx, all(3, "ECHO", "after-restart")), []int{0, 1, 2}, "after-restart")

	// Killed: "connection refused", well before the 5 s node timeout.
	if err := c.Nodes[1].Kill(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // with an idle connection, then with none
		start := time.Now()
		replies := tr.Exec(ctx, all(3, "ECHO", "dead"))
		if took := time.Since(start); took > locktest.Bound {
			t.Errorf("a dead node took %v to report", took)
		}
		wantEcho(t, replies, []int{0, 2}, "dead")
		if err := replies[1].Err; err == nil {
			t.Fatalf("dead node answered %+v", replies[1])
		}
	}
	replies := tr.Exec(ctx, all(3, "ECHO", "refused"))
	if err := replies[1].Err; err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("dead node: %v, want connection refused", err)
	}
	if err := c.Nodes[1].Restart(); err != nil {
		t.Fatal(err)
	}
	wantEcho(t, tr.Exec(ctx, all(3, "ECHO", "back")), []int{0, 1, 2}, "back")

	// Several nodes to dial at once, two of them dead.
	cold := newTransport(t, c.URLs(), 5*time.Second)
	for _, n := range c.Nodes[1:] {
		if err := n.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	replies = cold.Exec(ctx, all(3, "ECHO", "cold"))
	wantEcho(t, replies, []int{0}, "cold")
	for _, i := range []int{1, 2} {
		if err := replies[i].Err; err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("dead node %d: %v, want connection refused", i, err)
		}
	}
}

// TestRespAuthSelect: passwords (with and without a user name), SELECT,
// and refusals of either fail the node with a message that does not hold
// the password.
func TestRespAuthSelect(t *testing.T) {
	leakCheck(t)
	const password = "s3cret-pw"
	c := redistest.StartWith(t, 1, redistest.Options{Password: password})
	n := c.Nodes[0]
	if _, err := n.Do("ACL", "SETUSER", "alice", "on", ">alice-pw", "~*", "+@all"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	exec := func(url string, cmd ...string) core.Reply {
		tr := newTransport(t, []string{url}, 5*time.Second)
		r := tr.Exec(ctx, all(1, cmd...))[0]
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		return r
	}
	addr := n.Addr()
	if r := exec(n.URL(), "SET", "k0", "v", "NX", "PX", "60000"); r.Err != nil || r.Str != "OK" {
		t.Fatalf("with the password: %+v", r)
	}
	if r := exec("redis://alice:alice-pw@"+addr+"/3", "SET", "k3", "v", "NX", "PX", "60000"); r.Err != nil || r.Str != "OK" {
		t.Fatalf("as alice, db 3: %+v", r)
	}
	if r := exec("redis://alice:alice-pw@"+addr+"/3", "GET", "k0"); r.Err != nil || !r.Nil {
		t.Fatalf("db 3 sees db 0's key: %+v", r)
	}
	if r := exec("redis://alice:alice-pw@"+addr+"/3", "GET", "k3"); r.Err != nil || r.Str != "v" {
		t.Fatalf("db 3 lost its key: %+v", r)
	}
	keyspace, err := n.Do("INFO", "keyspace")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(keyspace, "db0:keys=1") || !strings.Contains(keyspace, "db3:keys=1") {
		t.Fatalf("keys not where SELECT put them:\n%s", keyspace)
	}
	for _, tc := range []struct{ url, want, secret string }{
		{"redis://:wrong-pw-123@" + addr, "WRONGPASS", "wrong-pw-123"},
		{"redis://alice:wrong-pw-456@" + addr, "WRONGPASS", "wrong-pw-456"},
		{"redis://alice:alice-pw@" + addr + "/99", "SELECT", "alice-pw"},
		{"redis://" + addr, "NOAUTH", ""},
	} {
		r := exec(tc.url, "SET", "never", "v")
		if r.Err == nil || !strings.Contains(r.Err.Error(), tc.want) {
			t.Errorf("%s: got %+v, want an error with %q", core.RedactURL(tc.url), r, tc.want)
		} else if tc.secret != "" && strings.Contains(r.Err.Error(), tc.secret) {
			t.Errorf("error %q holds the password", r.Err)
		}
	}
	if v, _ := n.Do("EXISTS", "never"); v != "0" {
		t.Fatal("a command ran on a connection whose AUTH or SELECT failed")
	}
	// A bad URL is refused when the transport is made, without the password.
	if _, err := core.NewRespTransport([]string{"redis://u:pw-in-url@" + addr + "/x"}, time.Second); err == nil || strings.Contains(err.Error(), "pw-in-url") {
		t.Errorf("bad db: %v", err)
	}
}

// TestRespConnectionBound: a burst of concurrent calls opens at most
// MaxConnsPerNode connections per node; the calls beyond wait for one
// within their deadline, and give up at it.
func TestRespConnectionBound(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 2)
	tr := newTransport(t, c.URLs(), 5*time.Second)
	ctx := context.Background()
	const callers = 100
	stop := make(chan struct{})
	maxOpen := make(chan int, 1)
	go func() { // watch the open count while the burst runs
		m := 0
		for {
			select {
			case <-stop:
				maxOpen <- m
				return
			default:
			}
			_, open, _ := core.ConnCounts(tr)
			m = max(m, open[0], open[1])
			runtime.Gosched()
		}
	}()
	var wg sync.WaitGroup
	for w := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 10 {
				word := fmt.Sprintf("%d-%d", w, r)
				replies := tr.Exec(ctx, all(2, "ECHO", word))
				for i, got := range replies {
					if got.Err != nil || got.Str != word {
						t.Errorf("node %d: %+v, want %q", i, got, word)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if m := <-maxOpen; m > core.MaxConnsPerNode || m < 2 {
		t.Errorf("%d connections open at most, bound %d", m, core.MaxConnsPerNode)
	}

	// Every connection stuck on a frozen node: the other calls wait (and
	// give up at their deadline); nothing stays open.
	frozen := newTransport(t, c.URLs()[:1], 2*time.Second)
	if err := c.Nodes[0].Freeze(); err != nil {
		t.Fatal(err)
	}
	const burst = core.MaxConnsPerNode + 5
	results := make(chan core.Reply, burst)
	for range burst {
		go func() { results <- frozen.Exec(ctx, all(1, "ECHO", "x"))[0] }()
	}
	locktest.Eventually(t, 5*time.Second, "the bound reached and the rest waiting", func() bool {
		_, open, waiting := core.ConnCounts(frozen)
		if open[0] > core.MaxConnsPerNode {
			t.Fatalf("%d connections open, bound %d", open[0], core.MaxConnsPerNode)
		}
		return open[0] == core.MaxConnsPerNode && waiting[0] == burst-core.MaxConnsPerNode
	})
	for range burst {
		if r := <-results; r.Err == nil {
			t.Fatalf("a frozen node answered %+v", r)
		}
	}
	if _, open, waiting := core.ConnCounts(frozen); open[0] != 0 || waiting[0] != 0 {
		t.Errorf("%d connections open, %d calls waiting after every call ended", open[0], waiting[0])
	}
	if err := c.Nodes[0].Thaw(); err != nil {
		t.Fatal(err)
	}
	wantEcho(t, frozen.Exec(ctx, all(1, "ECHO", "thawed")), []int{0}, "thawed")
}

// TestRespCancel: canceling the context ends an Exec blocked on a frozen
// node at once, not at the node timeout.
func TestRespCancel(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 2)
	tr := newTransport(t, c.URLs(), time.Minute)
	wantEcho(t, tr.Exec(context.Background(), all(2, "ECHO", "warm")), []int{0, 1}, "warm")
	if err := c.Nodes[0].Freeze(); err != nil {
		t.Fatal(err)
	}
	defer c.Nodes[0].Thaw()
	for _, cold := range []bool{false, true} {
		if cold { // the blocked read is on a connection dialed in this Exec
			tr = newTransport(t, c.URLs(), time.Minute)
		}
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan []core.Reply, 1)
		go func() { got <- tr.Exec(ctx, all(2, "ECHO", "x")) }()
		time.Sleep(50 * time.Millisecond) // let it block on the frozen node
		cancel()
		select {
		case replies := <-got:
			if !errors.Is(replies[0].Err, context.Canceled) {
				t.Errorf("frozen node: %+v, want context.Canceled", replies[0])
			}
		case <-time.After(locktest.Bound):
			t.Fatal("cancel did not end the Exec")
		}
	}
	// A context ended before the call sends nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i, r := range tr.Exec(ctx, all(2, "ECHO", "x")) {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("node %d: %+v, want context.Canceled", i, r)
		}
	}
	// A context deadline shorter than the node timeout is kept.
	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	start := time.Now()
	replies := tr.Exec(dctx, all(2, "ECHO", "y"))
	if took := time.Since(start); took > locktest.Bound {
		t.Errorf("a 100 ms context deadline took %v", took)
	}
	if replies[0].Err == nil {
		t.Errorf("frozen node answered %+v", replies[0])
	}
}

// TestRespClose: Close closes every connection (no descriptor left), and
// the transport refuses to work afterwards.
func TestRespClose(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	before := openFDs(t)
	tr, err := core.NewRespTransport(c.URLs(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 12 { // more connections than are kept idle
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				tr.Exec(context.Background(), all(3, "ECHO", "x"))
			}
		}()
	}
	wg.Wait()
	if during := openFDs(t); during <= before {
		t.Fatalf("no connections open (%d fds, %d before)", during, before)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d fds open after Close, %d before", after, before)
	}
	for i, r := range tr.Exec(context.Background(), all(3, "ECHO", "x")) {
		if r.Err == nil {
			t.Errorf("node %d answered after Close", i)
		}
	}
	if openFDs(t) != before {
		t.Error("Exec after Close opened a connection")
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestRespTLS: rediss:// URLs speak TLS (the URL's skip_verify accepts the
// test's self-signed certificate), with AUTH inside the TLS session.
func TestRespTLS(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	writeSelfSigned(t, dir)
	port := freePort(t)
	kill := startServer(t, "--port", "0", "--tls-port", fmt.Sprint(port),
		"--tls-cert-file", dir+"/cert.pem", "--tls-key-file", dir+"/key.pem", "--tls-ca-cert-file", dir+"/cert.pem",
		"--tls-auth-clients", "no", "--requirepass", "tls-pw")

	url := fmt.Sprintf("rediss://:tls-pw@127.0.0.1:%d?skip_verify=true", port)
	tr := newTransport(t, []string{url}, 5*time.Second)
	ctx := context.Background()
	locktest.Eventually(t, 10*time.Second, "the TLS server answers", func() bool {
		return tr.Exec(ctx, all(1, "PING"))[0].Str == "PONG"
	})
	wantEcho(t, tr.Exec(ctx, all(1, "ECHO", "over tls")), []int{0}, "over tls")
	if r := tr.Exec(ctx, all(1, "SET", "k", "v", "NX", "PX", "60000"))[0]; r.Err != nil || r.Str != "OK" {
		t.Fatalf("SET NX: %+v", r)
	}
	if r := tr.Exec(ctx, all(1, "SET", "k", "v", "NX", "PX", "60000"))[0]; r.Err != nil || !r.Nil {
		t.Fatalf("second SET NX: %+v", r)
	}
	if r := tr.Exec(ctx, all(1, "EVALSHA", "0000000000000000000000000000000000000000", "1", "k"))[0]; r.Err == nil || !strings.HasPrefix(r.Err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA: %+v", r)
	}
	// Without skip_verify the self-signed certificate is refused.
	strict := newTransport(t, []string{fmt.Sprintf("rediss://:tls-pw@127.0.0.1:%d", port)}, 5*time.Second)
	if r := strict.Exec(ctx, all(1, "PING"))[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "certificate") {
		t.Fatalf("self-signed certificate accepted: %+v", r)
	}
	kill()
	if r := tr.Exec(ctx, all(1, "PING"))[0]; r.Err == nil {
		t.Fatalf("a dead node answered %+v", r)
	}
}

// TestRespUnixSocket: unix:// URLs, with a database number.
func TestRespUnixSocket(t *testing.T) {
	leakCheck(t)
	sock := t.TempDir() + "/redis.sock"
	kill := startServer(t, "--port", "0", "--unixsocket", sock)
	tr := newTransport(t, []string{"unix://" + sock + "?db=2"}, 5*time.Second)
	ctx := context.Background()
	locktest.Eventually(t, 10*time.Second, "the server answers on its socket", func() bool {
		return tr.Exec(ctx, all(1, "PING"))[0].Str == "PONG"
	})
	if r := tr.Exec(ctx, all(1, "SET", "k", "v", "NX", "PX", "60000"))[0]; r.Err != nil || r.Str != "OK" {
		t.Fatalf("SET NX: %+v", r)
	}
	if r := tr.Exec(ctx, all(1, "EVAL", "return redis.call('INFO', 'keyspace')", "0"))[0]; r.Err != nil || !strings.Contains(r.Str, "db2:keys=1") {
		t.Fatalf("the key is not in db 2: %+v", r)
	}
	if got := tr.Nodes(); len(got) != 1 || got[0] != sock {
		t.Fatalf("Nodes() = %q, want the socket path", got)
	}
	kill()
	if r := tr.Exec(ctx, all(1, "PING"))[0]; r.Err == nil {
		t.Fatalf("a dead node answered %+v", r)
	}
}

// startServer starts a bare redis-server for the URL forms redistest does
// not cover (TLS, unix sockets); kill stops it, and so does the test's end.
func startServer(t *testing.T, args ...string) (kill func()) {
	t.Helper()
	bin, err := redistest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var once sync.Once
	kill = func() { once.Do(func() { _ = cmd.Process.Kill(); <-exited }) }
	t.Cleanup(kill)
	return kill
}

func writeSelfSigned(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "liblock test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"cert.pem": {Type: "CERTIFICATE", Bytes: der},
		"key.pem":  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(dir+"/"+name, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
