package redistest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Sentinel deployment: one primary, its replicas (replicaof) and
// sentinels watching them (redis-sentinel, which is redis-server run with
// --sentinel), all on free loopback ports, with short timeouts so that a
// failover takes a second or two:
//
//   - sentinels: down-after-milliseconds SentinelDownAfter, failover-timeout
//     SentinelFailoverTimeout, quorum 2 of 3;
//   - data nodes: repl-ping-replica-period 1 and repl-timeout 2 (seconds),
//     so that a primary drops a frozen replica's link within ~2 s (the
//     deterministic way to make a replica miss a write: see
//     WaitReplicaDropped), and diskless sync without delay.
//
// No data node persists anything: a killed node restarts empty, like the
// plain nodes of this package.

// SentinelMaster is the master name the deployment's sentinels monitor.
const SentinelMaster = "liblock"

// The deployment's Sentinel timings.
const (
	SentinelDownAfter       = 400 * time.Millisecond
	SentinelFailoverTimeout = 2 * time.Second
)

// SentinelInstallHint installs redis-sentinel (the Debian package puts a
// redis-sentinel binary beside redis-server; this package runs
// redis-server --sentinel, which is the same program).
const SentinelInstallHint = "apt-get update && apt-get install -y redis-sentinel   (or run `make deps`)"

// sentinelConf is what a sentinel's configuration file says.
type sentinelConf struct {
	masterPort int
	authPass   string // the data nodes' password (sentinel auth-pass)
}

// SentinelOptions configures StartSentinelWith.
type SentinelOptions struct {
	Replicas, Sentinels int
	// Password, when set, is the data nodes' requirepass (and the
	// replicas' masterauth, the sentinels' auth-pass); URL carries it as
	// the password= option.
	Password string
	// SentinelPassword, when set, is the sentinels' requirepass (and
	// sentinel-pass between them); URL carries it as the URL's password.
	SentinelPassword string
}

// Sentinel is a running Sentinel deployment.
type Sentinel struct {
	// Data holds the primary as started (Data[0]) and its replicas.
	// Which of them is the primary changes with each failover: ask
	// Primary.
	Data []*Node
	// Sentinels watch Data.
	Sentinels []*Node
	dir       string
	opts      SentinelOptions
}

// StartSentinel starts a primary with replicas replicas and sentinels
// sentinels for a test (2 and 3 are the usual numbers), waits until every
// replica is in sync and the sentinels agree on the primary and see each
// other, and stops everything when the test ends.
func StartSentinel(tb testing.TB, replicas, sentinels int) *Sentinel {
	tb.Helper()
	return StartSentinelWith(tb, SentinelOptions{Replicas: replicas, Sentinels: sentinels})
}

// StartSentinelWith is StartSentinel with options (passwords).
func StartSentinelWith(tb testing.TB, opts SentinelOptions) *Sentinel {
	tb.Helper()
	s, err := StartSentinelOpts(tb.TempDir(), opts)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// StartSentinelIn is StartSentinel with the nodes' directories under dir.
func StartSentinelIn(dir string, replicas, sentinels int) (*Sentinel, error) {
	return StartSentinelOpts(dir, SentinelOptions{Replicas: replicas, Sentinels: sentinels})
}

// StartSentinelOpts is StartSentinelIn with options.
func StartSentinelOpts(dir string, opts SentinelOptions) (*Sentinel, error) {
	replicas, sentinels := opts.Replicas, opts.Sentinels
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	s := &Sentinel{dir: dir, opts: opts}
	dataArgs := []string{"--repl-ping-replica-period", "1", "--repl-timeout", "2",
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}
	if opts.Password != "" {
		dataArgs = append(dataArgs, "--masterauth", opts.Password)
	}
	start := func(name string, n *Node) error {
		n.dir, n.bin = filepath.Join(dir, name), bin
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			return err
		}
		return n.startOnFreePort()
	}
	primary := &Node{Index: 0, extra: dataArgs, password: opts.Password}
	if err := start("data0", primary); err != nil {
		return nil, err
	}
	s.Data = append(s.Data, primary)
	for i := 1; i <= replicas; i++ {
		n := &Node{Index: i, extra: append(append([]string(nil), dataArgs...), "--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)),
			password: opts.Password}
		if err := start(fmt.Sprintf("data%d", i), n); err != nil {
			s.Close()
			return nil, err
		}
		s.Data = append(s.Data, n)
	}
	for i := 0; i < sentinels; i++ {
		n := &Node{Index: i, sentinel: &sentinelConf{masterPort: primary.Port, authPass: opts.Password}, password: opts.SentinelPassword}
		if err := start(fmt.Sprintf("sentinel%d", i), n); err != nil {
			s.Close()
			return nil, fmt.Errorf("%w (redis-sentinel: %s)", err, SentinelInstallHint)
		}
		s.Sentinels = append(s.Sentinels, n)
	}
	if err := s.waitSettled(primary, 30*time.Second); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// sentinelArgs writes the sentinel's configuration file (a sentinel
// rewrites it, so it is a file of its own) and returns its arguments.
func (n *Node) sentinelArgs() ([]string, error) {
	conf := filepath.Join(n.dir, "sentinel.conf")
	m := SentinelMaster
	text := strings.Join([]string{
		"port " + strconv.Itoa(n.Port),
		"bind 127.0.0.1",
		"daemonize no",
		"dir " + n.dir,
		"logfile " + filepath.Join(n.dir, "redis.log"),
		"sentinel monitor " + m + " 127.0.0.1 " + strconv.Itoa(n.sentinel.masterPort) + " 2",
		"sentinel down-after-milliseconds " + m + " " + strconv.Itoa(int(SentinelDownAfter.Milliseconds())),
		"sentinel failover-timeout " + m + " " + strconv.Itoa(int(SentinelFailoverTimeout.Milliseconds())),
		"sentinel parallel-syncs " + m + " 2",
	}, "\n") + "\n"
	if n.sentinel.authPass != "" {
		text += "sentinel auth-pass " + m + " " + n.sentinel.authPass + "\n"
	}
	if n.password != "" {
		text += "requirepass " + n.password + "\nsentinel sentinel-pass " + n.password + "\n"
	}
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	return []string{conf, "--sentinel"}, nil
}

// URL is the deployment's Sentinel node URL: the first sentinel as the
// URL's host, the others as addr=; the sentinels' password as the URL's,
// the data nodes' as password= (go-redis's ParseFailoverURL form).
func (s *Sentinel) URL() string {
	q := url.Values{"master_name": {SentinelMaster}}
	for _, n := range s.Sentinels[1:] {
		q.Add("addr", n.Addr())
	}
	if s.opts.Password != "" {
		q.Set("password", s.opts.Password)
	}
	u := url.URL{Scheme: "redis", Host: s.Sentinels[0].Addr(), RawQuery: q.Encode()}
	if s.opts.SentinelPassword != "" {
		u.User = url.UserPassword("", s.opts.SentinelPassword)
	}
	return u.String()
}

// Close kills every process of the deployment.
func (s *Sentinel) Close() {
	for _, n := range append(append([]*Node(nil), s.Sentinels...), s.Data...) {
		_ = n.Kill()
	}
}

// Named returns the primary address each sentinel names ("" when one does
// not answer).
func (s *Sentinel) Named() []string {
	out := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		if n.PID() == 0 || n.isFrozen() {
			continue
		}
		a, err := n.Do("SENTINEL", "get-master-addr-by-name", SentinelMaster)
		if err != nil || a == "(nil)" {
			continue
		}
		host, port, _ := strings.Cut(a, "\n")
		out[i] = net.JoinHostPort(host, port)
	}
	return out
}

// Role returns what ROLE says the data node is ("master", "slave"), or ""
// when it does not answer.
func (n *Node) Role() string {
	if n.PID() == 0 || n.isFrozen() {
		return ""
	}
	out, err := n.Do("ROLE")
	if err != nil {
		return ""
	}
	role, _, _ := strings.Cut(out, "\n")
	return role
}

// Primary returns the data node every sentinel names, if it says it is the
// primary; nil while the sentinels disagree or it does not.
func (s *Sentinel) Primary() *Node {
	var addr string
	for _, a := range s.Named() {
		if a == "" || (addr != "" && a != addr) {
			return nil
		}
		addr = a
	}
	for _, n := range s.Data {
		if n.Addr() == addr && n.Role() == "master" {
			return n
		}
	}
	return nil
}

// waitSettled waits until the sentinels name primary, see each other and
// the replicas, and every live replica of primary is in sync.
func (s *Sentinel) waitSettled(primary *Node, within time.Duration) error {
	deadline := time.Now().Add(within)
	var why string
	for time.Now().Before(deadline) {
		why = s.unsettled(primary)
		if why == "" {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("redistest: Sentinel deployment not settled after %v: %s", within, why)
}

func (s *Sentinel) unsettled(primary *Node) string {
	if p := s.Primary(); p != primary {
		return fmt.Sprintf("sentinels name %v, want %s", s.Named(), primary.Addr())
	}
	live := 0
	for _, n := range s.Data {
		if n == primary || n.PID() == 0 || n.isFrozen() {
			continue
		}
		live++
		info, err := n.Do("INFO", "replication")
		if err != nil || !strings.Contains(info, "master_link_status:up") || !strings.Contains(info, "master_port:"+strconv.Itoa(primary.Port)) {
			return fmt.Sprintf("replica %s not in sync with %s", n.Addr(), primary.Addr())
		}
	}
	for _, sn := range s.Sentinels {
		if sn.PID() == 0 || sn.isFrozen() {
			continue
		}
		out, err := sn.Do("SENTINEL", "CKQUORUM", SentinelMaster)
		if err != nil {
			return fmt.Sprintf("sentinel %s: %v", sn.Addr(), err)
		}
		if !strings.Contains(out, strconv.Itoa(len(s.Sentinels))+" usable") {
			return fmt.Sprintf("sentinel %s: %s", sn.Addr(), out)
		}
		reps, err := sn.Do("SENTINEL", "REPLICAS", SentinelMaster)
		if err != nil {
			return fmt.Sprintf("sentinel %s: %v", sn.Addr(), err)
		}
		if got := strings.Count(reps, "\nflags\n"+"slave\n"); got < live {
			return fmt.Sprintf("sentinel %s sees %d healthy replicas, want %d", sn.Addr(), got, live)
		}
	}
	return ""
}

// WaitFailover waits until the sentinels agree on a primary other than
// old, which says it is the primary and whose live replicas are in sync,
// and returns it.
//
// A sentinel that was not scheduled for two seconds (a busy or paused
// machine) enters TILT mode and takes no action for 30 s: time a sentinel
// spends in TILT is not counted against within (up to tiltAllowance in
// all), since no failover can come from it then.
func (s *Sentinel) WaitFailover(tb testing.TB, old *Node, within time.Duration) *Node {
	tb.Helper()
	const tiltAllowance = 70 * time.Second
	start := time.Now()
	deadline := start.Add(within)
	for time.Now().Before(deadline) {
		if p := s.Primary(); p != nil && p != old {
			return p
		}
		time.Sleep(50 * time.Millisecond)
		if s.tilted() > len(s.Sentinels)-(len(s.Sentinels)/2+1) && time.Since(start) < within+tiltAllowance {
			deadline = deadline.Add(50 * time.Millisecond)
		}
	}
	tb.Fatalf("redistest: no failover from %s within %v: sentinels name %v\n%s", old.Addr(), within, s.Named(), s.sentinelLogs(40))
	return nil
}

// tilted counts the live sentinels in TILT mode. With more than a
// minority in TILT, no failover can be agreed (a leader needs a majority's
// votes).
func (s *Sentinel) tilted() int {
	n := 0
	for _, sn := range s.Sentinels {
		if sn.PID() == 0 || sn.isFrozen() {
			continue
		}
		if info, err := sn.Do("INFO", "sentinel"); err == nil && strings.Contains(info, "sentinel_tilt:1") {
			n++
		}
	}
	return n
}

// sentinelLogs returns the last lines of each sentinel's log: why a
// failover did not happen (a sentinel in TILT mode, an election lost, no
// replica good enough) is written there and nowhere else.
func (s *Sentinel) sentinelLogs(lines int) string {
	var b strings.Builder
	for _, n := range s.Sentinels {
		text, err := os.ReadFile(filepath.Join(n.dir, "redis.log"))
		if err != nil {
			fmt.Fprintf(&b, "sentinel %s: %v\n", n.Addr(), err)
			continue
		}
		all := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
		if len(all) > lines {
			all = all[len(all)-lines:]
		}
		fmt.Fprintf(&b, "--- sentinel %s, its log's last %d lines:\n%s\n", n.Addr(), len(all), strings.Join(all, "\n"))
	}
	return b.String()
}

// WaitReplicaDropped waits until primary no longer counts replica among
// its connected replicas (a frozen replica's link times out after
// repl-timeout): from then on, what primary is written does not reach
// replica, even once thawed — its link must be made anew.
func (s *Sentinel) WaitReplicaDropped(tb testing.TB, primary, replica *Node, within time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		info, err := primary.Do("INFO", "replication")
		if err == nil && !strings.Contains(info, "port="+strconv.Itoa(replica.Port)+",") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("redistest: %s still counts replica %s after %v", primary.Addr(), replica.Addr(), within)
}

// AssertNoKeys fails the test if a live data node holds a key (waiting a
// moment: cleanups may still be on their way).
func (s *Sentinel) AssertNoKeys(tb testing.TB) {
	tb.Helper()
	c := &Cluster{Nodes: s.Data}
	c.AssertNoKeys(tb)
}
