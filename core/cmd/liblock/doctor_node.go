package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine/nodeurl"
	"github.com/redis/go-redis/v9"
)

// nodeFacts is what doctor learned of one node: its rows, and what the
// checks across nodes compare.
type nodeFacts struct {
	name       string // the URL without its password
	addr       string // host:port from the URL
	rows       []row
	reachable  bool
	runID      string
	replID     string
	replicaOf  string // host:port of its primary, if a replica
	offset     time.Duration
	clockKnown bool
	sentinel   bool   // a Sentinel node: its primary's role is checked through its sentinels (doctor_sentinel.go)
	cluster    bool   // a Redis Cluster node, or one of its shard primaries (doctor_cluster.go)
	keyTag     string // a shard primary's: a hash tag in its slots, for the commands check's key
	usedMemory string // INFO's used_memory and maxmemory (bytes), for the lock row's words on OOM
	maxMemory  string
}

func (f *nodeFacts) add(check, status, detail, fix string) {
	f.rows = append(f.rows, row{Node: f.name, Check: check, Status: status, Detail: detail, Fix: fix})
}

// probe runs every check on one node, with its own connection (go-redis,
// RESP2, each request bounded by o.timeout).
func (o *doctorOpts) probe(i int, url string, cfg core.Config) *nodeFacts {
	if nodeurl.IsFailover(url) {
		return o.probeSentinel(url, cfg)
	}
	if spec, err := nodeurl.Parse(url); err == nil && spec.Cluster {
		return o.probeCluster(url, cfg)
	}
	f := &nodeFacts{name: core.RedactURL(url)}
	opt, err := redis.ParseURL(url)
	if err != nil {
		f.add("reachable", statusFail, "bad URL: "+strings.ReplaceAll(err.Error(), url, f.name), "write redis://[user:password@]host:port[/db]")
		return f
	}
	f.addr = opt.Addr
	if opt.TLSConfig != nil { // rediss://: the --tls-* settings, as the library applies them
		opt.TLSConfig = forNode(o.tlsBase, opt.TLSConfig.ServerName, opt.TLSConfig.InsecureSkipVerify)
	}
	opt.Protocol = 2
	opt.DisableIdentity = true
	opt.MaxRetries = -1
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = o.timeout, o.timeout, o.timeout
	opt.PoolSize = 1
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	o.probeData(f, rdb, url, opt.Username, cfg)
	return f
}

// probeData runs the checks of a data node (a plain node, a Sentinel
// node's primary, or a Cluster node's shard primary) over rdb; url is the
// node URL the lock cycle uses ("" for none: a Cluster node runs one cycle
// through its own URL, not one per shard).
func (o *doctorOpts) probeData(f *nodeFacts, rdb *redis.Client, url, user string, cfg core.Config) {
	ctx := context.Background()
	if !o.checkReachable(ctx, f, rdb, cfg.NodeTimeout) {
		return
	}
	info := o.checkInfo(ctx, f, rdb)
	o.checkPersistence(ctx, f, rdb)
	checkEviction(f, info)
	o.checkClock(ctx, f, rdb)
	if f.replicaOf != "" {
		return // a replica refuses every write: the role row says so, the command rows would only repeat it
	}
	if user == "" {
		user = "default"
	}
	o.checkCommands(ctx, f, rdb, user)
	if url != "" {
		o.checkLockCycle(f, url, cfg)
	}
}

func (o *doctorOpts) checkReachable(ctx context.Context, f *nodeFacts, rdb *redis.Client, nodeTimeout time.Duration) bool {
	best := time.Duration(-1)
	for k := 0; k < 3; k++ {
		start := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			fix := hint(err)
			if fix == "" && strings.HasPrefix(f.name, "rediss://") && (o.tlsBase == nil || len(o.tlsBase.Certificates) == 0) && closedByPeer(err) {
				// Over TLS 1.3 a server that wants a client certificate
				// says so after the handshake: the client sees a reset.
				fix = "the node closed the TLS connection: if it requires client certificates (tls-auth-clients yes), " + fixClientCert[strings.Index(fixClientCert, "pass"):]
			}
			if fix == "" {
				fix = "start the node, or fix the address or firewall; a frozen or overloaded node looks the same"
			}
			f.add("reachable", statusFail, "PING: "+describeErr(err, o.timeout), fix)
			return false
		}
		if rtt := time.Since(start); best < 0 || rtt < best {
			best = rtt
		}
	}
	f.reachable = true
	detail := fmt.Sprintf("PING round trip %v (node timeout %v)", roundDur(best), nodeTimeout)
	switch {
	case best >= nodeTimeout:
		f.add("reachable", statusFail, detail+": every request would time out", "raise --node-timeout (Config.NodeTimeout) well above the round trip")
	case best > nodeTimeout/2:
		f.add("reachable", statusWarn, detail+": little room before a request times out", "raise --node-timeout (Config.NodeTimeout) to a few round trips")
	default:
		f.add("reachable", statusOK, detail, "")
	}
	return true
}

// closedByPeer reports a connection the server closed or reset.
func closedByPeer(err error) bool {
	s := err.Error()
	return errors.Is(err, io.EOF) || strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe") || strings.Contains(s, "EOF")
}

func describeErr(err error, timeout time.Duration) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("no answer within %v (%v)", timeout, err)
	}
	return err.Error()
}

// isDenied reports an error of a command the user may not run, or that the
// server does not offer (managed Redis renames or removes CONFIG).
func isDenied(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "NOPERM") || strings.Contains(s, "unknown command")
}

// parseInfo reads INFO's key:value lines.
func parseInfo(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			m[k] = v
		}
	}
	return m
}

// checkInfo reads INFO (server, replication, memory) for the version, the
// role and the identity of the node.
func (o *doctorOpts) checkInfo(ctx context.Context, f *nodeFacts, rdb *redis.Client) map[string]string {
	raw, err := rdb.Info(ctx).Result()
	if err != nil {
		fix := "allow INFO for this user (+info)"
		f.add("version", statusWarn, "cannot read INFO: "+err.Error(), fix)
		f.add("role", statusWarn, "cannot read INFO: "+err.Error(), fix)
		return nil
	}
	info := parseInfo(raw)
	f.runID, f.replID = info["run_id"], info["master_replid"]
	checkVersion(f, info["redis_version"], info["redis_mode"])
	checkClusterEnabled(f, info)
	if f.sentinel || f.cluster {
		return info // the role row is the topology checks' (the Sentinel's ROLE, the cluster's shard rows)
	}
	switch role := info["role"]; role {
	case "master":
		if n, _ := strconv.Atoi(info["connected_slaves"]); n > 0 {
			var reps []string
			for k := 0; k < n; k++ {
				m := parseCSV(info["slave"+strconv.Itoa(k)])
				reps = append(reps, net.JoinHostPort(m["ip"], m["port"]))
			}
			f.add("role", statusWarn, fmt.Sprintf("a primary with %d replica(s) (%s): a failover to one can lose locks granted just before it (replication is asynchronous)", n, strings.Join(reps, ", ")),
				"run no automatic failover for lock nodes (or none at all): Redlock's nodes are independent primaries")
		} else {
			f.add("role", statusOK, "a primary without replicas", "")
		}
	case "slave":
		f.replicaOf = net.JoinHostPort(info["master_host"], info["master_port"])
		f.add("role", statusFail, "a replica of "+f.replicaOf+": replicas refuse the lock's writes (or, writable, drop them at the next resync)",
			"list primaries only: replace this node by an independent primary (REPLICAOF NO ONE makes it one)")
	default:
		f.add("role", statusWarn, fmt.Sprintf("role %q", role), "list independent primaries")
	}
	return info
}

func parseCSV(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// checkVersion: the commands liblock sends exist from Redis 2.8 (SET NX PX
// 2.6.12, EVAL/EVALSHA 2.6, PUBSUB NUMSUB 2.8); its suites run against 7.0.
func checkVersion(f *nodeFacts, version, mode string) {
	parts := strings.SplitN(version, ".", 3)
	major, _ := strconv.Atoi(parts[0])
	minor := 0
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(parts[1])
	}
	switch {
	case mode == "sentinel":
		f.add("version", statusFail, "a Sentinel, not a data node", "list the primaries, not their Sentinels")
	case version == "":
		f.add("version", statusWarn, "INFO names no redis_version", "check the server is Redis (or a compatible one) ≥ 6.0")
	case major < 2 || (major == 2 && minor < 8):
		f.add("version", statusFail, "Redis "+version+": lacks commands liblock sends (SET NX PX needs 2.6.12, PUBSUB NUMSUB 2.8)", "upgrade to Redis 6.0 or later")
	case major < 6:
		f.add("version", statusWarn, "Redis "+version+": has the commands liblock needs, but is untested (liblock is tested against 7.0) and past its end of life", "upgrade to Redis 6.0 or later")
	case mode == "cluster":
		// A shard primary of a cluster=yes node; a plain URL at a cluster
		// node gets the cluster row's fail (checkClusterEnabled).
		f.add("version", statusOK, "Redis "+version+" (cluster mode)", "")
	default:
		f.add("version", statusOK, "Redis "+version, "")
	}
}

func (o *doctorOpts) checkPersistence(ctx context.Context, f *nodeFacts, rdb *redis.Client) {
	cfg := map[string]string{}
	for _, k := range []string{"appendonly", "appendfsync", "save"} {
		m, err := rdb.ConfigGet(ctx, k).Result()
		if err != nil {
			if isDenied(err) {
				f.add("persistence", statusWarn, "cannot read config ("+err.Error()+")",
					"ask your provider: appendonly yes with appendfsync always, or restarts delayed past your largest ttl")
				return
			}
			f.add("persistence", statusWarn, "CONFIG GET "+k+": "+err.Error(), "")
			return
		}
		cfg[k] = m[k]
	}
	restart := "keep a restarted node out (not started, or firewalled) for longer than your largest ttl, which also keeps fences and election terms increasing while the nodes' clocks agree within that time (the clock row)"
	switch {
	case cfg["appendonly"] == "yes" && cfg["appendfsync"] == "always":
		f.add("persistence", statusOK, "appendonly yes, appendfsync always: a restart keeps every granted lock", "")
	case cfg["appendonly"] == "yes" && cfg["appendfsync"] == "everysec":
		f.add("persistence", statusWarn, "appendonly yes, appendfsync everysec: a crash loses up to 1 s of grants, and a second client can then take a lock that is still held",
			"CONFIG SET appendfsync always (and in redis.conf), or "+restart)
	case cfg["appendonly"] == "yes":
		f.add("persistence", statusWarn, "appendonly yes, appendfsync "+cfg["appendfsync"]+": the OS decides when to write (up to ~30 s on Linux): a crash loses the grants since",
			"CONFIG SET appendfsync always (and in redis.conf), or "+restart)
	case cfg["save"] != "":
		f.add("persistence", statusWarn, fmt.Sprintf("snapshots only (save %q): a restart loses every lock granted since the last snapshot", cfg["save"]),
			"appendonly yes + appendfsync always, or "+restart)
	default:
		f.add("persistence", statusWarn, "none (appendonly no, save \"\"): a restart forgets every lock, and a second client can then take a lock that is still held",
			restart+", or appendonly yes + appendfsync always")
	}
}

// checkEviction reads INFO memory: with a memory limit, every policy but
// noeviction can evict a held lock.
func checkEviction(f *nodeFacts, info map[string]string) {
	if info == nil {
		return
	}
	maxmem, policy := info["maxmemory"], info["maxmemory_policy"]
	f.usedMemory, f.maxMemory = info["used_memory"], maxmem
	switch {
	case maxmem == "" || policy == "":
		f.add("eviction", statusWarn, "INFO names no maxmemory / maxmemory_policy", "make sure maxmemory-policy is noeviction")
	case maxmem == "0":
		f.add("eviction", statusOK, "maxmemory 0: no memory limit, nothing is evicted (policy "+policy+")", "")
	case policy == "noeviction":
		f.add("eviction", statusOK, "maxmemory "+maxmem+", noeviction: when full, acquires fail; no lock is evicted", "")
	case strings.HasPrefix(policy, "allkeys-"):
		f.add("eviction", statusFail, "maxmemory "+maxmem+" with "+policy+": any key can be evicted, a held lock included",
			"CONFIG SET maxmemory-policy noeviction (and in redis.conf), or keep locks on nodes of their own")
	case strings.HasPrefix(policy, "volatile-"):
		f.add("eviction", statusFail, "maxmemory "+maxmem+" with "+policy+": every key with a ttl can be evicted, and every lock has one",
			"CONFIG SET maxmemory-policy noeviction (and in redis.conf), or keep locks on nodes of their own")
	default:
		f.add("eviction", statusWarn, "maxmemory "+maxmem+" with policy "+policy, "use maxmemory-policy noeviction")
	}
}

func (o *doctorOpts) checkClock(ctx context.Context, f *nodeFacts, rdb *redis.Client) {
	t0 := time.Now()
	nt, err := rdb.Time(ctx).Result()
	t1 := time.Now()
	if err != nil {
		f.add("clock", statusWarn, "TIME: "+err.Error(), "allow TIME for this user")
		return
	}
	half := t1.Sub(t0) / 2
	f.offset = nt.Sub(t0.Add(half))
	f.clockKnown = true
	detail := fmt.Sprintf("%s from this host's clock (±%v)", signed(f.offset), roundDur(half))
	status := clockStatus(f.offset)
	fix := ""
	if status != statusOK {
		detail += " (or this host's clock is off): " + clockWhy
		fix = clockFix
	}
	f.add("clock", status, detail, fix)
}

// checkCommands tries the commands liblock sends, as the URL's user, on a
// key and channel of its own (deleted at once): EVALSHA of an unknown
// script must say NOSCRIPT, not NOPERM.
func (o *doctorOpts) checkCommands(ctx context.Context, f *nodeFacts, rdb *redis.Client, user string) {
	key := o.keyPrefix + "liblock-doctor:" + randomHex() + f.keyTag
	channel := "liblock:released:" + key
	var failed, degraded, fine []string
	cause := "" // a fix the node's own words name (out of memory, a replica), beyond the ACL's
	try := func(name string, err error, essential bool) {
		if h := hint(err); h != "" && h != fixNoPerm && cause == "" {
			cause = h
		}
		switch {
		case err != nil && strings.HasPrefix(err.Error(), "NOPERM"):
			if essential {
				failed = append(failed, name+" ("+err.Error()+")")
			} else {
				degraded = append(degraded, name+" ("+err.Error()+")")
			}
		case err != nil && err != redis.Nil:
			failed = append(failed, name+": "+err.Error())
		default:
			fine = append(fine, name)
		}
	}
	try("SET NX PX", rdb.Do(ctx, "SET", key, "doctor", "NX", "PX", "1000").Err(), true)
	try("DEL", rdb.Del(ctx, key).Err(), true)
	err := rdb.EvalSha(ctx, strings.Repeat("0", 40), []string{key}).Err()
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		err = nil
	} else if err == nil {
		err = errors.New("an unknown script ran")
	}
	try("EVALSHA", err, true)
	try("EVAL", rdb.Eval(ctx, "return 1", []string{key}).Err(), true)
	// Fenced locks, read-write locks and elections call TIME in their
	// acquire scripts (the fence's clock floor).
	try("TIME in a script", rdb.Eval(ctx, "return redis.call('TIME')", []string{key}).Err(), true)
	try("PUBLISH", rdb.Publish(ctx, channel, "").Err(), false)
	try("SUBSCRIBE", subscribe(ctx, rdb, channel, o.timeout), false)
	switch {
	case len(failed) > 0 && cause != "":
		f.add("commands", statusFail, "user "+user+" could not run "+strings.Join(failed, "; "), cause)
	case len(failed) > 0:
		f.add("commands", statusFail, "user "+user+" may not run "+strings.Join(failed, "; "),
			"ACL SETUSER "+user+" +set +del +eval +evalsha +publish +subscribe +pubsub|numsub +get +pttl +pexpire +time on the lock keys (~"+o.keyPrefix+"*) and channels (&liblock:released:*)")
	case len(degraded) > 0:
		f.add("commands", statusWarn, "user "+user+" may not run "+strings.Join(degraded, "; ")+": a release wakes no waiter in another process; waiters find the lock free by polling (2–50 ms later)",
			"ACL SETUSER "+user+" +publish +subscribe &liblock:released:*")
	default:
		f.add("commands", statusOK, "user "+user+" may run "+strings.Join(fine, ", "), "")
	}
}

// subscribe subscribes on a connection of its own and closes it.
func subscribe(ctx context.Context, rdb *redis.Client, channel string, timeout time.Duration) error {
	ps := rdb.Subscribe(ctx)
	defer ps.Close()
	if err := ps.Subscribe(ctx, channel); err != nil {
		return err
	}
	msg, err := ps.ReceiveTimeout(ctx, timeout)
	if err != nil {
		return err
	}
	if _, ok := msg.(*redis.Subscription); !ok {
		return fmt.Errorf("unexpected reply %v", msg)
	}
	return nil
}

// checkLockCycle acquires, extends and releases a lock of its own on this
// node alone, through liblock itself: the scripts' own commands (GET, PTTL,
// PEXPIRE, PUBSUB) pass the node's ACL only if this works.
func (o *doctorOpts) checkLockCycle(f *nodeFacts, url string, cfg core.Config) {
	cfg.Nodes = []string{url}
	if cfg.NodeTimeout < o.timeout {
		cfg.NodeTimeout = o.timeout
	}
	client, err := core.New(cfg)
	if err != nil {
		f.add("lock", statusFail, errText(err), "")
		return
	}
	defer client.Close()
	ctx := context.Background()
	resource := "liblock-doctor:" + randomHex()
	start := time.Now()
	lock, err := client.Acquire(ctx, resource, 5*time.Second)
	if err == nil {
		// The first use of a script on a connection sends its source
		// (EVAL), later ones its sum (EVALSHA): extend twice to run both.
		if err = lock.Extend(ctx, 5*time.Second); err == nil {
			err = lock.Extend(ctx, 5*time.Second)
		}
		if relErr := lock.Release(ctx); err == nil {
			err = relErr
		}
	}
	if err != nil {
		detail := "acquire, extend (EVAL, then EVALSHA), release of " + cfg.KeyPrefix + resource + ": " + errText(err)
		fix := hint(err)
		switch {
		case strings.Contains(err.Error(), "OOM ") && f.maxMemory != "":
			detail += fmt.Sprintf(" (used_memory %s, maxmemory %s)", f.usedMemory, f.maxMemory)
		case strings.Contains(err.Error(), "NOPERM"):
			fix = "see the commands row; allow the commands liblock's scripts run (GET, SET, PTTL, PEXPIRE, DEL, PUBLISH, PUBSUB)"
		case fix == "":
			fix = "see the rows above for this node's cause"
		}
		f.add("lock", statusFail, detail, fix)
		return
	}
	f.add("lock", statusOK, fmt.Sprintf("acquire, extend twice (EVAL, then EVALSHA), release of a lock of its own: %v", roundDur(time.Since(start))), "")
}

// quiet drops go-redis's own log lines (a failed dial is already a row).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quiet{}) }

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + roundDur(d).String()
	}
	return roundDur(d).String()
}
