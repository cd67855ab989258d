package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// InstallHint is the command that installs redis-server on this project's
// machines. It is printed whenever the binary is missing.
const InstallHint = "apt-get update && apt-get install -y redis-server   (or run `make deps`)"

// readyTimeout bounds how long a node may take to answer its first PING.
const readyTimeout = 10 * time.Second

// Binary returns the path of redis-server, from $REDIS_SERVER or $PATH.
func Binary() (string, error) {
	if p := os.Getenv("REDIS_SERVER"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redistest: redis-server not found in PATH; install it with: %s", InstallHint)
	}
	return p, nil
}

// Cluster is a set of independent redis-server processes.
type Cluster struct {
	Nodes []*Node
	dir   string
	owned bool // dir was created by us and is removed on Close
}

// Options configures the nodes StartWith and StartClusterWith start.
type Options struct {
	// Password, when set, starts every node with --requirepass: URL and
	// URLs then carry it (redis://:password@host:port), and Do and the
	// readiness check authenticate with it.
	Password string
	// BasePort, when set, puts node i on port BasePort+i instead of a
	// free port (a developer's fixed nodes); a port in use is an error
	// naming it.
	BasePort int
}

// Node is one redis-server process on a fixed loopback port. Its methods are
// safe for concurrent use.
type Node struct {
	Index int
	Port  int
	// TLSPort is the node's TLS port (0: none; a TLS RedisCluster's nodes).
	TLSPort  int
	dir      string
	bin      string
	password string

	// extra are more server arguments (a replica's --replicaof), and
	// sentinel makes the process a sentinel (sentinel.go).
	extra    []string
	sentinel *sentinelConf

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	frozen bool
}

// Start starts n nodes for a test and stops them when the test ends, even
// when it fails. A missing redis-server fails the test (never skips it),
// naming the install command.
func Start(tb testing.TB, n int) *Cluster {
	tb.Helper()
	return StartWith(tb, n, Options{})
}

// StartWith is Start with options.
func StartWith(tb testing.TB, n int, opts Options) *Cluster {
	tb.Helper()
	c, err := StartClusterWith(n, tb.TempDir(), opts)
	require.NoError(tb, err)
	tb.Cleanup(c.Close)
	return c
}

// StartCluster starts n nodes with their data directories under dir. An
// empty dir means a new temporary directory, removed by Close.
func StartCluster(n int, dir string) (*Cluster, error) {
	return StartClusterWith(n, dir, Options{})
}

// StartClusterWith is StartCluster with options.
func StartClusterWith(n int, dir string, opts Options) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("redistest: need at least one node, got %d", n)
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if dir != "" {
		// redis-server resolves --logfile after changing into --dir.
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, err
		}
	}
	c := &Cluster{dir: dir}
	if dir == "" {
		if c.dir, err = os.MkdirTemp("", "redistest-"); err != nil {
			return nil, err
		}
		c.owned = true
	}
	for i := 0; i < n; i++ {
		node := &Node{Index: i, dir: filepath.Join(c.dir, fmt.Sprintf("node%d", i)), bin: bin, password: opts.Password}
		if err := os.MkdirAll(node.dir, 0o755); err != nil {
			c.Close()
			return nil, err
		}
		if opts.BasePort > 0 {
			node.Port = opts.BasePort + i
			err = node.start()
		} else {
			err = node.startOnFreePort()
		}
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, node)
	}
	return c, nil
}

// URLs returns one redis:// URL per node, in node order.
func (c *Cluster) URLs() []string {
	urls := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		urls[i] = n.URL()
	}
	return urls
}

// Close kills every node and removes the data directory if Start made it.
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		_ = n.Kill()
	}
	if c.owned {
		_ = os.RemoveAll(c.dir)
	}
}

// Addr is the node's host:port.
func (n *Node) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.Port)) }

// URL is the node's redis:// URL, with the password if it has one.
func (n *Node) URL() string {
	if n.password != "" {
		return (&url.URL{Scheme: "redis", User: url.UserPassword("", n.password), Host: n.Addr()}).String()
	}
	return "redis://" + n.Addr()
}

// PID returns the process id of the running server, or 0 when it is down.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

func (n *Node) startOnFreePort() error {
	var lastErr error
	// Another process can take a port between our probe and redis binding
	// it, so try a few.
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		n.Port = port
		if lastErr = n.start(); lastErr == nil {
			return nil
		}
	}
	return lastErr
}

func (n *Node) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return fmt.Errorf("redistest: node %d is already running", n.Index)
	}
	args := []string{
		"--port", strconv.Itoa(n.Port),
		"--bind", "127.0.0.1",
		"--dir", n.dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", filepath.Join(n.dir, "redis.log"),
	}
	if n.password != "" {
		args = append(args, "--requirepass", n.password)
	}
	if n.sentinel != nil {
		var err error
		if args, err = n.sentinelArgs(); err != nil {
			return err
		}
	}
	args = append(args, n.extra...)
	cmd := exec.Command(n.bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start %s: %w", n.bin, err)
	}
	if n.sentinel != nil {
		// A sentinel not scheduled for 2 s enters TILT mode and acts on
		// nothing for 30 s; on a busy machine (two test lanes on two
		// cores) a raised priority keeps it scheduled. Refused without
		// privilege: then it runs at the default priority.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, -10)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if err := waitReady(n.Addr(), n.password, cmd.Process.Pid, exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		log, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
		return fmt.Errorf("redistest: node %d on port %d: %w\n%s", n.Index, n.Port, err, lastLines(string(log), 5))
	}
	n.cmd, n.exited, n.frozen = cmd, exited, false
	return nil
}

// Kill sends SIGKILL and waits for the process to exit. Killing a node that
// is down is a no-op.
func (n *Node) Kill() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return nil
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
	n.cmd, n.exited, n.frozen = nil, nil, false
	return nil
}

// Freeze sends SIGSTOP: the node keeps its port and accepts TCP connections
// (the kernel does that), but never answers — the nastiest failure a client
// can meet.
func (n *Node) Freeze() error { return n.signal(syscall.SIGSTOP, true) }

// Thaw sends SIGCONT to a frozen node.
func (n *Node) Thaw() error { return n.signal(syscall.SIGCONT, false) }

func (n *Node) signal(sig syscall.Signal, frozen bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return fmt.Errorf("redistest: node %d is not running", n.Index)
	}
	if err := n.cmd.Process.Signal(sig); err != nil {
		return err
	}
	n.frozen = frozen
	return nil
}

// Restart kills the node if it runs and starts a fresh, empty one on the
// same port (no persistence: the restarted node has forgotten every key).
func (n *Node) Restart() error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.start()
}

// Do sends one command to the node over a fresh connection and returns the
// reply in RESP's text form; tests use it to inspect and tamper with keys
// without going through the code under test.
func (n *Node) Do(args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", n.Addr(), 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	if err := auth(r, conn, n.password); err != nil {
		return "", err
	}
	return roundTrip(r, conn, args)
}

// auth authenticates a fresh connection when the node has a password.
func auth(r *bufio.Reader, w net.Conn, password string) error {
	if password == "" {
		return nil
	}
	_, err := roundTrip(r, w, []string{"AUTH", password})
	return err
}

func roundTrip(r *bufio.Reader, w net.Conn, args []string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := w.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return readReply(r)
}

// readReply reads one RESP2 reply. Arrays come back as their elements
// joined by newlines; nil as "(nil)"; errors as a Go error.
func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("redistest: empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		size, _ := strconv.Atoi(line[1:])
		if size < 0 {
			return "(nil)", nil
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:size]), nil
	case '*':
		count, _ := strconv.Atoi(line[1:])
		if count < 0 {
			return "(nil)", nil
		}
		parts := make([]string, 0, count)
		for i := 0; i < count; i++ {
			p, err := readReply(r)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, "\n"), nil
	}
	return "", fmt.Errorf("redistest: unexpected reply %q", line)
}

// CommandStats returns every command the node ran since it started or
// since its last CONFIG RESETSTAT, by the name INFO commandstats gives it
// ("set", "evalsha", "pubsub|numsub"), with its number of calls; a command
// a script ran counts too.
func (n *Node) CommandStats() (map[string]int, error) {
	v, err := n.Do("INFO", "commandstats")
	if err != nil {
		return nil, err
	}
	stats := map[string]int{}
	for _, line := range strings.Split(v, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		end := strings.IndexByte(rest, ',')
		if end < 0 {
			end = len(rest)
		}
		calls, err := strconv.Atoi(rest[:end])
		if err != nil {
			return nil, fmt.Errorf("redistest: INFO commandstats line %q: %w", line, err)
		}
		stats[name] = calls
	}
	return stats, nil
}

// CommandCalls is how many times the node ran command (CommandStats).
func (n *Node) CommandCalls(command string) (int, error) {
	stats, err := n.CommandStats()
	return stats[command], err
}

// Keys returns the keys stored on the node (KEYS *; test data is tiny).
func (n *Node) Keys() ([]string, error) {
	out, err := n.Do("KEYS", "*")
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// AssertNoKeys fails the test if any live node still holds a key: the
// "no lock left behind" check.
func (c *Cluster) AssertNoKeys(tb testing.TB) {
	tb.Helper()
	// An operation ends as soon as a quorum answered; the commands to the
	// other nodes are still on their way (each bounded by the node timeout).
	// So a key may take a moment to go: wait for it, with a deadline long
	// enough for a loaded 2-core machine running -race (a command queued at
	// a thawed node, or a key that goes only with its ttl of a second or
	// two, takes that long); it costs nothing when the keys are gone.
	deadline := time.Now().Add(5 * time.Second)
	for _, n := range c.Nodes {
		if n.PID() == 0 || n.isFrozen() {
			continue
		}
		var keys []string
		var err error
		poll.Wait(time.Until(deadline), func() bool {
			keys, err = n.Keys()
			return err != nil || len(keys) == 0
		})
		assert.NoError(tb, err, "node %d: KEYS", n.Index)
		assert.Empty(tb, keys, "node %d still holds keys %q", n.Index, keys)
	}
}

// FlushAll empties every live node.
func (c *Cluster) FlushAll() error {
	for _, n := range c.Nodes {
		if n.PID() == 0 || n.isFrozen() {
			continue
		}
		if _, err := n.Do("FLUSHALL"); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) isFrozen() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.frozen
}

func waitReady(addr, password string, pid int, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = conn.SetDeadline(time.Now().Add(time.Second))
			r := bufio.NewReader(conn)
			out, perr := "", auth(r, conn, password)
			if perr == nil {
				out, perr = roundTrip(r, conn, []string{"INFO", "server"})
			}
			conn.Close()
			// The server that answers must be this one: another test
			// process may have taken the same free port an instant
			// earlier, and then this one exits unable to bind it.
			if perr == nil {
				if got, ok := infoField(out, "process_id"); ok {
					if got == strconv.Itoa(pid) {
						return nil
					}
					return fmt.Errorf("port taken by another redis-server (pid %s)", got)
				}
			}
		}
		select {
		case <-exited:
			return errors.New("redis-server exited during start-up")
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v", readyTimeout)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// infoField returns field's value in an INFO reply.
func infoField(info, field string) (string, bool) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v, true
		}
	}
	return "", false
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
