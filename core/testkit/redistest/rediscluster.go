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
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/stretchr/testify/require"
)

// A Redis Cluster: primaries and their replicas (redis-server
// --cluster-enabled yes), joined by redis-cli --cluster create, on free
// loopback ports, with short timeouts so that a failover takes a second or
// two:
//
//   - cluster-node-timeout ClusterNodeTimeout, and
//     cluster-replica-validity-factor 0 (a replica that lost its link for
//     long is still promotable: the negative control freezes one);
//   - cluster-require-full-coverage no (a dead primary's slots fail, the
//     others keep serving);
//   - repl-ping-replica-period 1 and repl-timeout 2 (seconds), so that a
//     primary drops a frozen replica's link within ~2 s (WaitReplicaDropped).
//
// The cluster bus listens on a second free port (cluster-port), not on
// port+10000, which may not exist for an ephemeral port. Nothing persists:
// a killed node is gone (a test does not restart cluster nodes).
//
// It is not a Cluster (this package's set of independent masters): the
// name RedisCluster keeps the two apart.

// ClusterNodeTimeout is the cluster's cluster-node-timeout.
const ClusterNodeTimeout = 1000 * time.Millisecond

// RedisCluster is a running Redis Cluster.
type RedisCluster struct {
	// Nodes: every node, primaries first (Nodes[:Primaries] were the
	// primaries when it started; failovers change that), then each
	// primary's replicas in primary order.
	Nodes     []*Node
	Primaries int
	dir       string
	owned     bool
	bus       map[*Node]int // each node's cluster bus port
	password  string
	tls       bool
}

// RedisClusterOptions configures StartRedisClusterWith.
type RedisClusterOptions struct {
	Primaries, ReplicasEach int
	// Password, when set, is every node's requirepass (and masterauth):
	// URL carries it as the URL's password, and Do authenticates with it.
	Password string
	// TLS, when set, makes every node listen with TLS too, on a port of
	// its own (Node.TLSPort), and run the cluster bus and replication over
	// TLS (tls-cluster, tls-replication): CLUSTER SHARDS and -MOVED then
	// name TLS ports to a client on a TLS connection. The plain port stays
	// open for the kit's own commands (Do, redis-cli --cluster create).
	TLS *ClusterTLS
}

// ClusterTLS are the PEM files of a TLS cluster: every node presents
// Cert/Key to clients, ClientCert/ClientKey to the other nodes (the bus and
// replication), and trusts CA (for the other nodes, and for clients'
// certificates, which it asks for but does not require).
type ClusterTLS struct {
	Cert, Key, ClientCert, ClientKey, CA string
}

// StartRedisCluster starts a cluster of primaries primaries with
// replicasEach replicas each for a test, and kills it when the test ends.
func StartRedisCluster(tb testing.TB, primaries, replicasEach int) *RedisCluster {
	tb.Helper()
	return StartRedisClusterWith(tb, RedisClusterOptions{Primaries: primaries, ReplicasEach: replicasEach})
}

// StartRedisClusterWith is StartRedisCluster with options.
func StartRedisClusterWith(tb testing.TB, opts RedisClusterOptions) *RedisCluster {
	tb.Helper()
	c, err := StartRedisClusterOpts(tb.TempDir(), opts)
	if errors.Is(err, errClusterNeverJoined) {
		// Once, with new nodes on new ports (see errClusterNeverJoined).
		tb.Logf("%v; starting the cluster again", err)
		c, err = StartRedisClusterOpts(tb.TempDir(), opts)
	}
	require.NoError(tb, err)
	tb.Cleanup(c.Close)
	return c
}

// errClusterNeverJoined: redis-cli --cluster create did not see the nodes
// agree within clusterCreateTimeout. It waits for that without a bound,
// and a node's bus can meet a stranger: its port, free when it was picked,
// can be taken by another suite's server (test suites run side by side)
// before the node binds it.
var errClusterNeverJoined = errors.New("redistest: redis-cli --cluster create: the nodes never agreed on the configuration")

// clusterCreateTimeout bounds redis-cli --cluster create (a variable for
// its test).
var clusterCreateTimeout = 60 * time.Second

// StartRedisClusterIn starts a cluster with its nodes' directories under
// dir (a new temporary directory, removed by Close, when dir is empty), and
// returns once every node says cluster_state:ok and every replica is in
// sync with its primary.
func StartRedisClusterIn(dir string, primaries, replicasEach int) (*RedisCluster, error) {
	return StartRedisClusterOpts(dir, RedisClusterOptions{Primaries: primaries, ReplicasEach: replicasEach})
}

// StartRedisClusterOpts is StartRedisClusterIn with options.
func StartRedisClusterOpts(dir string, opts RedisClusterOptions) (*RedisCluster, error) {
	primaries, replicasEach := opts.Primaries, opts.ReplicasEach
	if primaries < 1 || replicasEach < 0 {
		return nil, fmt.Errorf("redistest: a cluster needs at least one primary and no negative replica count, got %d and %d", primaries, replicasEach)
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	cli, err := cliBinary()
	if err != nil {
		return nil, err
	}
	c := &RedisCluster{Primaries: primaries, bus: map[*Node]int{}, password: opts.Password, tls: opts.TLS != nil}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "rediscluster-"); err != nil {
			return nil, err
		}
		c.owned = true
	}
	if c.dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	total := primaries * (1 + replicasEach)
	for i := 0; i < total; i++ {
		n := &Node{Index: i, dir: filepath.Join(c.dir, fmt.Sprintf("cnode%d", i)), bin: bin, password: opts.Password}
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			c.Close()
			return nil, err
		}
		bus, err := n.startClusterNode(opts.TLS)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.bus[n] = bus
		c.Nodes = append(c.Nodes, n)
	}
	if primaries >= 3 {
		// redis-cli --cluster create takes the first `primaries` addresses
		// as primaries and assigns the rest as replicas; which replica
		// follows which primary is read back from the cluster afterwards.
		args := []string{"--cluster", "create"}
		for _, n := range c.Nodes {
			args = append(args, n.Addr())
		}
		args = append(args, "--cluster-replicas", strconv.Itoa(replicasEach), "--cluster-yes")
		if opts.Password != "" {
			args = append(args, "-a", opts.Password, "--no-auth-warning")
		}
		ctx, cancel := context.WithTimeout(context.Background(), clusterCreateTimeout)
		out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
		stuck := ctx.Err() != nil
		cancel()
		if err != nil {
			c.Close()
			if stuck {
				err = fmt.Errorf("%w within %v", errClusterNeverJoined, clusterCreateTimeout)
			}
			return nil, fmt.Errorf("redistest: redis-cli --cluster create: %w\n%s", err, lastLines(string(out), 10))
		}
	} else if err := c.createSmall(replicasEach); err != nil {
		// redis-cli refuses fewer than 3 primaries: the same by hand.
		c.Close()
		return nil, err
	}
	if err := c.waitOK(60 * time.Second); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// createSmall makes a cluster of 1 or 2 primaries as redis-cli would
// (which refuses fewer than 3): the slots split between the primaries,
// every node met, each replica following its primary.
func (c *RedisCluster) createSmall(replicasEach int) error {
	p := c.Primaries
	for i := 0; i < p; i++ {
		lo, hi := i*16384/p, (i+1)*16384/p-1
		if _, err := c.Nodes[i].Do("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return fmt.Errorf("redistest: CLUSTER ADDSLOTSRANGE on %s: %w", c.Nodes[i].Addr(), err)
		}
	}
	for _, n := range c.Nodes[1:] {
		if _, err := c.Nodes[0].Do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(n.Port), strconv.Itoa(c.bus[n])); err != nil {
			return fmt.Errorf("redistest: CLUSTER MEET %s: %w", n.Addr(), err)
		}
	}
	for k, n := range c.Nodes[p:] {
		primary := c.Nodes[k%p]
		id, err := primary.ID()
		if err != nil {
			return err
		}
		// A replica can follow a primary only once it knows it (gossip).
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err = n.Do("CLUSTER", "REPLICATE", id); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("redistest: CLUSTER REPLICATE on %s: %w", n.Addr(), err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// cliBinary returns the path of redis-cli, from $REDIS_CLI or $PATH.
func cliBinary() (string, error) {
	if p := os.Getenv("REDIS_CLI"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("redis-cli")
	if err != nil {
		return "", fmt.Errorf("redistest: redis-cli not found in PATH; install it with: %s", InstallHint)
	}
	return p, nil
}

// startClusterNode starts a cluster-enabled node on two free ports (data
// and bus), three with TLS (and TLS's), and returns the bus port.
func (n *Node) startClusterNode(tlsFiles *ClusterTLS) (int, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		bus, err := freePort()
		if err != nil {
			return 0, err
		}
		var tlsArgs []string
		if tlsFiles != nil {
			if n.TLSPort, err = freePort(); err != nil {
				return 0, err
			}
			tlsArgs = []string{"--tls-port", strconv.Itoa(n.TLSPort), "--tls-cert-file", tlsFiles.Cert,
				"--tls-key-file", tlsFiles.Key, "--tls-ca-cert-file", tlsFiles.CA, "--tls-auth-clients", "optional",
				"--tls-client-cert-file", tlsFiles.ClientCert, "--tls-client-key-file", tlsFiles.ClientKey,
				"--tls-cluster", "yes", "--tls-replication", "yes"}
		}
		n.extra = []string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(n.dir, "nodes.conf"),
			"--cluster-port", strconv.Itoa(bus), "--cluster-node-timeout", strconv.Itoa(int(ClusterNodeTimeout.Milliseconds())),
			"--cluster-replica-validity-factor", "0", "--cluster-require-full-coverage", "no",
			"--repl-ping-replica-period", "1", "--repl-timeout", "2",
			"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}
		if n.password != "" {
			n.extra = append(n.extra, "--masterauth", n.password)
		}
		n.extra = append(n.extra, tlsArgs...)
		_ = os.Remove(filepath.Join(n.dir, "nodes.conf"))
		if lastErr = n.startOnFreePort(); lastErr == nil {
			return bus, nil
		}
	}
	return 0, lastErr
}

// URL is the cluster's node URL: the first node as the URL's host, the
// others as addr= seeds, and cluster=yes (and the password, if any, as the
// URL's).
func (c *RedisCluster) URL() string { return c.url("redis", (*Node).Addr) }

// TLSURL is URL over TLS: rediss://, the nodes' TLS ports. Only for a
// cluster started with RedisClusterOptions.TLS.
func (c *RedisCluster) TLSURL() string {
	if !c.tls {
		panic("redistest: TLSURL of a cluster started without TLS")
	}
	return c.url("rediss", (*Node).TLSAddr)
}

func (c *RedisCluster) url(scheme string, addr func(*Node) string) string {
	q := url.Values{"cluster": {"yes"}}
	for _, n := range c.Nodes[1:] {
		q.Add("addr", addr(n))
	}
	u := url.URL{Scheme: scheme, Host: addr(c.Nodes[0]), RawQuery: q.Encode()}
	if c.password != "" {
		u.User = url.UserPassword("", c.password)
	}
	return u.String()
}

// TLSAddr is the node's TLS address (a node of a TLS cluster).
func (n *Node) TLSAddr() string { return "127.0.0.1:" + strconv.Itoa(n.TLSPort) }

// Close kills every node and removes the directory if the cluster made it.
func (c *RedisCluster) Close() {
	for _, n := range c.Nodes {
		_ = n.Kill()
	}
	if c.owned {
		_ = os.RemoveAll(c.dir)
	}
}

// live returns the nodes that run and are not frozen.
func (c *RedisCluster) live() []*Node {
	var out []*Node
	for _, n := range c.Nodes {
		if n.PID() != 0 && !n.isFrozen() {
			out = append(out, n)
		}
	}
	return out
}

// unsettled says why the cluster is not settled yet, or "": every live
// node says cluster_state:ok, every slot is served, and every live replica
// has its link to its primary up.
func (c *RedisCluster) unsettled() string {
	for _, n := range c.live() {
		info, err := n.Do("CLUSTER", "INFO")
		if err != nil {
			return fmt.Sprintf("%s: CLUSTER INFO: %v", n.Addr(), err)
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
			return fmt.Sprintf("%s: %s", n.Addr(), strings.ReplaceAll(lastLines(info, 20), "\r\n", " "))
		}
		repl, err := n.Do("INFO", "replication")
		if err != nil {
			return fmt.Sprintf("%s: INFO replication: %v", n.Addr(), err)
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Sprintf("%s: replica link not up", n.Addr())
		}
	}
	// The replicas redis-cli assigned have joined (a replica that is still
	// a primary without slots would not be counted above).
	want := len(c.Nodes) - c.Primaries
	got := 0
	for _, n := range c.live() {
		if n.Role() == "slave" {
			got++
		}
	}
	if got < want-c.down() {
		return fmt.Sprintf("%d of %d replicas attached", got, want)
	}
	return ""
}

// down counts the nodes killed or frozen.
func (c *RedisCluster) down() int { return len(c.Nodes) - len(c.live()) }

func (c *RedisCluster) waitOK(within time.Duration) error {
	deadline := time.Now().Add(within)
	why := ""
	for time.Now().Before(deadline) {
		if why = c.unsettled(); why == "" {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("redistest: cluster not settled after %v: %s", within, why)
}

// WaitOK waits until every live node says the cluster is ok and every live
// replica is in sync.
func (c *RedisCluster) WaitOK(tb testing.TB, within time.Duration) {
	tb.Helper()
	require.NoError(tb, c.waitOK(within))
}

// Slot returns the hash slot of key (CLUSTER KEYSLOT on a live node).
func (c *RedisCluster) Slot(tb testing.TB, key string) int {
	tb.Helper()
	for _, n := range c.live() {
		out, err := n.Do("CLUSTER", "KEYSLOT", key)
		if err == nil {
			s, err := strconv.Atoi(out)
			require.NoError(tb, err)
			return s
		}
	}
	tb.Fatalf("redistest: no live cluster node answered CLUSTER KEYSLOT")
	return -1
}

// ID returns the node's cluster node id.
func (n *Node) ID() (string, error) { return n.Do("CLUSTER", "MYID") }

// PrimaryOf returns the node that serves slot as a primary, as the live
// nodes' slot maps say (nil when none does, or they disagree).
func (c *RedisCluster) PrimaryOf(slot int) *Node {
	var found *Node
	for _, n := range c.live() {
		tree, err := n.DoTree("CLUSTER", "SLOTS")
		if err != nil {
			return nil
		}
		var port int
		for _, r := range asList(tree) {
			e := asList(r)
			if len(e) < 3 {
				continue
			}
			lo, hi := asInt(e[0]), asInt(e[1])
			if int64(slot) >= lo && int64(slot) <= hi {
				port = int(asInt(asList(e[2])[1]))
			}
		}
		p := c.byPort(port)
		if p == nil || (found != nil && found != p) {
			return nil
		}
		found = p
	}
	if found != nil && found.Role() != "master" {
		return nil
	}
	return found
}

func (c *RedisCluster) byPort(port int) *Node {
	for _, n := range c.Nodes {
		if n.Port == port {
			return n
		}
	}
	return nil
}

// PrimaryOfKey is PrimaryOf the key's slot, polled until the nodes agree.
func (c *RedisCluster) PrimaryOfKey(tb testing.TB, key string) *Node {
	tb.Helper()
	slot := c.Slot(tb, key)
	var p *Node
	require.Eventually(tb, func() bool { p = c.PrimaryOf(slot); return p != nil }, 30*time.Second, 20*time.Millisecond,
		"no agreed primary for slot %d", slot)
	return p
}

// ReplicasOf returns the live replicas of primary (by INFO replication on
// each node).
func (c *RedisCluster) ReplicasOf(primary *Node) []*Node {
	var out []*Node
	for _, n := range c.live() {
		if n == primary {
			continue
		}
		info, err := n.Do("INFO", "replication")
		if err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_port:"+strconv.Itoa(primary.Port)+"\r") {
			out = append(out, n)
		}
	}
	return out
}

// OtherPrimary returns a live primary serving slots other than p.
func (c *RedisCluster) OtherPrimary(tb testing.TB, p *Node) *Node {
	tb.Helper()
	for _, n := range c.live() {
		if n != p && n.Role() == "master" {
			if out, err := n.Do("CLUSTER", "COUNTKEYSINSLOT", "0"); err == nil && out != "" {
				return n
			}
		}
	}
	tb.Fatalf("redistest: no other primary than %s", p.Addr())
	return nil
}

// Failover runs CLUSTER FAILOVER [mode] on replica (mode "" for a manual
// failover, "FORCE" or "TAKEOVER") and waits until it is a primary and the
// cluster is settled again. A manual failover that cannot finish in time
// (the replica not yet caught up with its primary's offset) is aborted by
// Redis without a word, so the command is sent again every 5 s until the
// replica is promoted or 30 s have passed.
func (c *RedisCluster) Failover(tb testing.TB, replica *Node, mode string) {
	tb.Helper()
	args := []string{"CLUSTER", "FAILOVER"}
	if mode != "" {
		args = append(args, mode)
	}
	promoted := func() bool { return replica.Role() == "master" }
	deadline := time.Now().Add(30 * time.Second)
	for !promoted() {
		require.Falsef(tb, time.Now().After(deadline), "%s not promoted by CLUSTER FAILOVER %s within 30s", replica.Addr(), mode)
		if _, err := replica.Do(args...); err != nil && !promoted() { // promoted meanwhile: a replica's command
			require.NoError(tb, err)
		}
		poll.Wait(5*time.Second, promoted) // Redis's manual failover timeout
	}
	c.WaitOK(tb, 30*time.Second)
}

// WaitReplicaDropped waits until primary no longer counts replica among
// its connected replicas (a frozen replica's link times out after
// repl-timeout): what primary is written from then on does not reach it.
func (c *RedisCluster) WaitReplicaDropped(tb testing.TB, primary, replica *Node) {
	tb.Helper()
	require.Eventually(tb, func() bool {
		info, err := primary.Do("INFO", "replication")
		return err == nil && !strings.Contains(info, "port="+strconv.Itoa(replica.Port)+",")
	}, 30*time.Second, 20*time.Millisecond, "%s still counts replica %s", primary.Addr(), replica.Addr())
}

// BeginMigration marks slot as migrating from its primary from to the
// primary to (CLUSTER SETSLOT IMPORTING on to, MIGRATING on from): from
// then on from answers -ASK for the slot's keys it no longer has.
func (c *RedisCluster) BeginMigration(tb testing.TB, slot int, from, to *Node) {
	tb.Helper()
	fromID, err := from.ID()
	require.NoError(tb, err)
	toID, err := to.ID()
	require.NoError(tb, err)
	s := strconv.Itoa(slot)
	_, err = to.Do("CLUSTER", "SETSLOT", s, "IMPORTING", fromID)
	require.NoError(tb, err)
	_, err = from.Do("CLUSTER", "SETSLOT", s, "MIGRATING", toID)
	require.NoError(tb, err)
}

// MoveKeys moves the keys of slot that from still holds to to (MIGRATE
// ... KEYS), as a migration does between BeginMigration and EndMigration.
func (c *RedisCluster) MoveKeys(tb testing.TB, slot int, from, to *Node) {
	tb.Helper()
	keys, err := from.DoTree("CLUSTER", "GETKEYSINSLOT", strconv.Itoa(slot), "1000")
	require.NoError(tb, err)
	ks := asList(keys)
	if len(ks) == 0 {
		return
	}
	port := to.Port
	if c.tls {
		port = to.TLSPort // with tls-cluster, MIGRATE connects over TLS
	}
	args := []string{"MIGRATE", "127.0.0.1", strconv.Itoa(port), "", "0", "5000", "KEYS"}
	for _, k := range ks {
		args = append(args, k.(string))
	}
	_, err = from.Do(args...)
	require.NoError(tb, err)
}

// EndMigration gives slot to to on every live primary (CLUSTER SETSLOT
// NODE), after the keys were moved: from then on from answers -MOVED.
func (c *RedisCluster) EndMigration(tb testing.TB, slot int, from, to *Node) {
	tb.Helper()
	toID, err := to.ID()
	require.NoError(tb, err)
	s := strconv.Itoa(slot)
	// The importing node first, then the old owner, then the others (the
	// order redis-cli uses).
	for _, n := range append([]*Node{to, from}, c.live()...) {
		if n.Role() != "master" {
			continue
		}
		_, err := n.Do("CLUSTER", "SETSLOT", s, "NODE", toID)
		require.NoError(tb, err, "SETSLOT NODE on %s", n.Addr())
	}
	require.Eventually(tb, func() bool { return c.PrimaryOf(slot) == to }, 30*time.Second, 20*time.Millisecond,
		"slot %d not owned by %s everywhere", slot, to.Addr())
}

// MigrateSlot moves slot, with its keys, from its primary to to.
func (c *RedisCluster) MigrateSlot(tb testing.TB, slot int, to *Node) {
	tb.Helper()
	var from *Node
	require.Eventually(tb, func() bool { from = c.PrimaryOf(slot); return from != nil }, 30*time.Second, 20*time.Millisecond)
	if from == to {
		return
	}
	c.BeginMigration(tb, slot, from, to)
	c.MoveKeys(tb, slot, from, to)
	c.EndMigration(tb, slot, from, to)
}

// Keys returns every key of the live primaries.
func (c *RedisCluster) Keys(tb testing.TB) []string {
	tb.Helper()
	var all []string
	for _, n := range c.live() {
		if n.Role() != "master" {
			continue
		}
		ks, err := n.Keys()
		require.NoError(tb, err)
		all = append(all, ks...)
	}
	return all
}

// AssertNoKeys fails the test if a live node holds a key once cleanups
// on their way had a moment (polled).
func (c *RedisCluster) AssertNoKeys(tb testing.TB) {
	tb.Helper()
	(&Cluster{Nodes: c.live()}).AssertNoKeys(tb)
}

// GetOnReplica reads key on a replica (READONLY first, else it answers
// -MOVED).
func (n *Node) GetOnReplica(key string) (string, error) {
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
	if _, err := roundTrip(r, conn, []string{"READONLY"}); err != nil {
		return "", err
	}
	return roundTrip(r, conn, []string{"GET", key})
}

// DoTree sends one command over a fresh connection and returns its reply
// as a tree: string, int64, nil, or []any.
func (n *Node) DoTree(args ...string) (any, error) {
	conn, err := net.DialTimeout("tcp", n.Addr(), 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	if err := auth(r, conn, n.password); err != nil {
		return nil, err
	}
	if _, err := conn.Write(encodeCommand(args)); err != nil {
		return nil, err
	}
	return readTree(r)
}

func encodeCommand(args []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

func readTree(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, errors.New("redistest: empty reply")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '-':
		return nil, errors.New(line[1:])
	case '$':
		size, _ := strconv.Atoi(line[1:])
		if size < 0 {
			return nil, nil
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:size]), nil
	case '*':
		count, _ := strconv.Atoi(line[1:])
		if count < 0 {
			return nil, nil
		}
		out := make([]any, 0, count)
		for i := 0; i < count; i++ {
			e, err := readTree(r)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("redistest: unexpected reply %q", line)
}

func asList(v any) []any { l, _ := v.([]any); return l }

func asInt(v any) int64 { i, _ := v.(int64); return i }
