package main

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine/nodeurl"
	"github.com/redis/go-redis/v9"
)

// doctor's topology checks of a Sentinel node (a URL with master_name=):
// the lock lives on whichever data node the sentinels name as primary, so
// what must hold is that the sentinels can be asked (each reachable), that
// they give one answer (agreement), that they can fail over at all (their
// quorum and a majority for the authorization), that a failover has a
// replica to promote which has the grants (replicas known and connected,
// and WAIT asked of them: wait_replicas), and that the named node is the
// primary indeed (ROLE). The data checks (persistence, eviction, clock,
// commands, a lock cycle) then run on that primary, as for a plain node.

// sentinelView is what one sentinel said.
type sentinelView struct {
	addr    string
	err     error         // no answer (PING)
	rtt     time.Duration // PING round trip
	primary string        // the primary it names, host:port ("" when it knows no such master)
	nameErr error         // SENTINEL GET-MASTER-ADDR-BY-NAME failed
	master  map[string]string
}

// probeSentinel runs the topology checks, then the data checks on the
// primary the sentinels name.
func (o *doctorOpts) probeSentinel(url string, cfg core.Config) *nodeFacts {
	f := &nodeFacts{name: core.RedactURL(url), sentinel: true}
	spec, err := nodeurl.Parse(url)
	if err != nil {
		f.add("reachable", statusFail, "bad Sentinel URL: "+err.Error(),
			"write redis://[s_user:s_password@]sentinel:port?master_name=NAME&addr=sentinel2:port...[&password=P]")
		return f
	}
	views := o.askSentinels(spec)
	reachable := 0
	for _, v := range views {
		check := "sentinel " + v.addr
		switch {
		case v.err != nil:
			f.add(check, statusWarn, "no answer: "+describeErr(v.err, o.timeout)+"; liblock asks the next sentinel, but a failover needs a majority of the sentinels",
				"start it again, or replace it (and SENTINEL RESET on the others once it is gone for good)")
		case v.nameErr != nil:
			reachable++
			f.add(check, statusFail, fmt.Sprintf("answers (%v) but SENTINEL GET-MASTER-ADDR-BY-NAME %s: %v", roundDur(v.rtt), spec.MasterName, v.nameErr),
				"allow the sentinel commands for this user, or fix the URL's credentials")
		case v.primary == "":
			reachable++
			f.add(check, statusFail, fmt.Sprintf("answers (%v) but monitors no master named %q", roundDur(v.rtt), spec.MasterName),
				"fix master_name= in the URL, or remove this address from it (it watches another deployment)")
		default:
			reachable++
			f.add(check, statusOK, fmt.Sprintf("answers in %v, names the primary %s (its quorum %s, sees %s other sentinels)",
				roundDur(v.rtt), v.primary, dash(v.master["quorum"]), dash(v.master["num-other-sentinels"])), "")
		}
	}
	primary, agreed := agreement(f, views)
	known := len(views)
	var asked *sentinelView // a sentinel naming the agreed primary
	for i := range views {
		v := &views[i]
		if n, err := strconv.Atoi(v.master["num-other-sentinels"]); err == nil && n+1 > known {
			known = n + 1
		}
		if asked == nil && v.primary != "" && v.primary == primary {
			asked = v
		}
	}
	if asked == nil {
		return f // no sentinel names a primary: the rows say why; nothing more to ask
	}
	o.sentinelQuorum(f, spec, asked, reachable, known)
	connected := o.sentinelReplicas(f, spec, asked)
	waitRow(f, "Sentinel", cfg.WaitReplicas, connected)

	if !agreed {
		return f // which primary the lock lands on is not settled: the agreement row fails; do not probe one at random
	}
	// The data checks, on the primary they name (with the primary's own
	// credentials: the URL's username= and password= options).
	f.addr = primary
	host, _, _ := net.SplitHostPort(primary)
	rdb := redis.NewClient(o.options(spec, primary, spec.Username, spec.Password, spec.DB, host))
	defer rdb.Close()
	o.checkRole(f, rdb, primary)
	o.probeData(f, rdb, url, spec.Username, cfg)
	return f
}

// askSentinels asks every sentinel of the URL at once.
func (o *doctorOpts) askSentinels(spec nodeurl.Spec) []sentinelView {
	views := make([]sentinelView, len(spec.Sentinels))
	var wg sync.WaitGroup
	for i, addr := range spec.Sentinels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			views[i] = o.askSentinel(spec, addr)
		}()
	}
	wg.Wait()
	return views
}

// options are doctor's connection settings for addr: RESP2, one
// connection, no retry, every request bounded by --timeout; TLS (verifying
// serverName) when the node URL is rediss://.
func (o *doctorOpts) options(spec nodeurl.Spec, addr, user, password string, db int, serverName string) *redis.Options {
	opt := &redis.Options{Addr: addr, Username: user, Password: password, DB: db,
		Protocol: 2, DisableIdentity: true, MaxRetries: -1, PoolSize: 1,
		DialTimeout: o.timeout, ReadTimeout: o.timeout, WriteTimeout: o.timeout}
	if spec.TLS {
		opt.TLSConfig = forNode(o.tlsBase, serverName, spec.SkipVerify)
	}
	return opt
}

func (o *doctorOpts) sentinelClient(spec nodeurl.Spec, addr string) *redis.SentinelClient {
	host, _, _ := net.SplitHostPort(addr)
	opt := o.options(spec, addr, spec.SentinelUsername, spec.SentinelPassword, 0, host)
	return redis.NewSentinelClient(opt)
}

func (o *doctorOpts) askSentinel(spec nodeurl.Spec, addr string) sentinelView {
	v := sentinelView{addr: addr}
	sc := o.sentinelClient(spec, addr)
	defer sc.Close()
	ctx := context.Background()
	start := time.Now()
	if v.err = sc.Ping(ctx).Err(); v.err != nil {
		return v
	}
	v.rtt = time.Since(start)
	hp, err := sc.GetMasterAddrByName(ctx, spec.MasterName).Result()
	switch {
	case err == redis.Nil:
		return v
	case err != nil:
		v.nameErr = err
		return v
	case len(hp) == 2:
		v.primary = net.JoinHostPort(hp[0], hp[1])
	}
	v.master, _ = sc.Master(ctx, spec.MasterName).Result()
	return v
}

// agreement: every sentinel that answers names the same primary. Two
// answers mean a failover under way or a partition: a client asking one
// sentinel and a client asking another lock on two primaries.
func agreement(f *nodeFacts, views []sentinelView) (primary string, agreed bool) {
	by := map[string][]string{}
	for _, v := range views {
		if v.primary != "" {
			by[v.primary] = append(by[v.primary], v.addr)
		}
	}
	switch len(by) {
	case 0:
		f.add("sentinels agree", statusFail, "no sentinel names a primary: liblock cannot find the node to lock on",
			"start the sentinels, or fix the URL (its host and addr= are the sentinels, master_name= the name they monitor)")
		return "", false
	case 1:
		for p, who := range by {
			f.add("sentinels agree", statusOK, fmt.Sprintf("%d sentinel(s) name %s", len(who), p), "")
			return p, true
		}
	}
	var parts []string
	most := 0
	for p, who := range by {
		parts = append(parts, fmt.Sprintf("%s by %s", p, strings.Join(who, ", ")))
		if len(who) > most || (len(who) == most && p < primary) {
			primary, most = p, len(who)
		}
	}
	sort.Strings(parts)
	f.add("sentinels agree", statusFail, "the sentinels name different primaries ("+strings.Join(parts, "; ")+"): a failover is under way, or they are partitioned; two clients may lock on two primaries",
		"wait for the failover to settle (SENTINEL GET-MASTER-ADDR-BY-NAME on each), and check the sentinels reach each other")
	return primary, false
}

// sentinelQuorum: SENTINEL CKQUORUM (the configured quorum is reachable,
// and a majority to authorize a failover), and a majority of the
// deployment's sentinels answering doctor itself.
func (o *doctorOpts) sentinelQuorum(f *nodeFacts, spec nodeurl.Spec, asked *sentinelView, reachable, known int) {
	sc := o.sentinelClient(spec, asked.addr)
	defer sc.Close()
	ck, err := sc.CkQuorum(context.Background(), spec.MasterName).Result()
	majority := known/2 + 1
	listed := ""
	if len(spec.Sentinels) < known {
		listed = fmt.Sprintf("; the URL lists %d of the %d sentinels (liblock can ask only those)", len(spec.Sentinels), known)
	}
	switch {
	case err != nil:
		f.add("sentinel quorum", statusFail, "SENTINEL CKQUORUM "+spec.MasterName+" on "+asked.addr+": "+err.Error()+listed,
			"bring back enough sentinels for the quorum and a majority of all of them (3 sentinels: 2)")
	case reachable < majority:
		f.add("sentinel quorum", statusFail, fmt.Sprintf("only %d of %d sentinels answer: no majority (%d) can authorize a failover%s", reachable, known, majority, listed),
			"bring back the sentinels that do not answer")
	default:
		status, fix := statusOK, ""
		if listed != "" {
			status, fix = statusWarn, "list every sentinel in the URL (addr=host:port for each after the first)"
		}
		f.add("sentinel quorum", status, fmt.Sprintf("quorum %s, %d of %d sentinels answer: %s%s", dash(asked.master["quorum"]), reachable, known, ck, listed), fix)
	}
}

// sentinelReplicas: the replicas the sentinels know and how many are
// connected (no s_down/o_down/disconnected flag, link up). A failover can
// only promote one of those, and only a connected one has the grants.
func (o *doctorOpts) sentinelReplicas(f *nodeFacts, spec nodeurl.Spec, asked *sentinelView) (connected int) {
	sc := o.sentinelClient(spec, asked.addr)
	defer sc.Close()
	reps, err := sc.Replicas(context.Background(), spec.MasterName).Result()
	if err != nil {
		f.add("replicas", statusWarn, "SENTINEL REPLICAS "+spec.MasterName+": "+err.Error(), "allow the sentinel commands for this user")
		return -1
	}
	var down []string
	for _, r := range reps {
		addr := net.JoinHostPort(r["ip"], r["port"])
		if r["flags"] == "slave" && r["master-link-status"] == "ok" {
			connected++
			continue
		}
		down = append(down, fmt.Sprintf("%s (flags %s, link %s)", addr, r["flags"], dash(r["master-link-status"])))
	}
	switch {
	case len(reps) == 0:
		f.add("replicas", statusWarn, "the sentinels know no replica of "+spec.MasterName+": a failover has nothing to promote (the primary is a single point of failure), and WAIT nothing to wait for",
			"add a replica or two (replicaof the primary); the sentinels find them")
	case len(down) > 0:
		f.add("replicas", statusWarn, fmt.Sprintf("%d replica(s) known, %d connected; not: %s", len(reps), connected, strings.Join(down, "; ")),
			"bring the replicas back in sync: a failover promotes only a connected one, and a grant reaches only those")
	default:
		f.add("replicas", statusOK, fmt.Sprintf("%d replica(s) known, all connected", len(reps)), "")
	}
	return connected
}

// waitRow: on a Sentinel node a grant on the primary alone is lost when
// the primary fails before replicating it; WAIT (wait_replicas) makes the
// grant count only once replicas have it. Off is a warning; more than the
// connected replicas can acknowledge refuses every acquire.
func waitRow(f *nodeFacts, kind string, wait *int, connected int) {
	w, def := 1, " (the default on "+kind+" nodes)"
	if wait != nil {
		w, def = *wait, ""
	}
	switch {
	case w == 0:
		f.add("wait_replicas", statusWarn, "0: WAIT is off: a grant counts on the primary alone, and a failover right after it promotes a replica without it (two holders)",
			"--wait-replicas 1 (Config.WaitReplicas, wait_replicas) or more; it costs one replica round trip per grant")
	case connected >= 0 && w > connected:
		f.add("wait_replicas", statusFail, fmt.Sprintf("%d%s, but %d replica(s) connected: no grant can be acknowledged, every acquire is refused (unavailable)", w, def, connected),
			fmt.Sprintf("bring replicas back, or --wait-replicas %d (0 turns the replica check off)", max(connected, 0)))
	default:
		f.add("wait_replicas", statusOK, fmt.Sprintf("%d%s: a grant counts once %d replica(s) acknowledged it (WAIT)", w, def, w), "")
	}
}

// checkRole: the node the sentinels name says it is the primary (ROLE). A
// replica there means stale sentinels or a failover half done: locks would
// be refused (a replica refuses writes).
func (o *doctorOpts) checkRole(f *nodeFacts, rdb *redis.Client, primary string) {
	res, err := rdb.Do(context.Background(), "ROLE").Slice()
	if err != nil {
		f.add("role", statusFail, "ROLE on "+primary+", the primary the sentinels name: "+describeErr(err, o.timeout),
			"start the primary, or let the sentinels fail over (SENTINEL FAILOVER)")
		return
	}
	role, _ := res[0].(string)
	switch role {
	case "master":
		n := 0
		if len(res) > 2 {
			if reps, ok := res[2].([]any); ok {
				n = len(reps)
			}
		}
		f.add("role", statusOK, fmt.Sprintf("%s says ROLE master, with %d replica(s) attached", primary, n), "")
	default:
		if len(res) > 2 {
			f.replicaOf = net.JoinHostPort(fmt.Sprint(res[1]), fmt.Sprint(res[2]))
		}
		f.add("role", statusFail, fmt.Sprintf("%s, which the sentinels name as primary, says ROLE %s: a failover is half done or the sentinels are stale; it refuses the lock's writes", primary, role),
			"wait for the failover to finish; check that the sentinels see the real primary (SENTINEL RESET <master name>)")
	}
}

// checkClusterEnabled: a plain node URL pointing at a Redis Cluster node
// sends every key to that one node, which answers MOVED for the slots it
// does not serve: liblock counts that node as failed for most resources.
func checkClusterEnabled(f *nodeFacts, info map[string]string) {
	if info["cluster_enabled"] != "1" || f.sentinel || f.cluster {
		return
	}
	f.add("cluster", statusFail, "cluster_enabled:1 — a Redis Cluster node given as a plain node URL: it serves only its own slots and answers MOVED for the others, which liblock counts as a failed node",
		"use the cluster node URL (the cluster= form, listing the cluster's seeds) instead of one of its nodes")
}
