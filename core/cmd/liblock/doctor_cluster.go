package main

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/engine/nodeurl"
	"github.com/redis/go-redis/v9"
)

// doctor's topology checks of a Redis Cluster node (a URL with
// cluster=yes): the node is one vote of the quorum, but its locks live on
// whichever primary serves each resource's slot. So what must hold is that
// the seeds can be asked (each reachable), that the cluster serves every
// slot (CLUSTER INFO), that each shard has a replica a failover can
// promote and that WAIT is asked of it (wait_replicas), and that every
// primary passes the data checks of a plain node (persistence, eviction,
// clock, commands). One lock cycle then runs through the cluster URL, as
// for any node.

// probeCluster runs the topology checks, then the data checks on every
// shard primary.
func (o *doctorOpts) probeCluster(url string, cfg core.Config) *nodeFacts {
	f := &nodeFacts{name: core.RedactURL(url), cluster: true}
	spec, err := nodeurl.Parse(url)
	if err != nil {
		f.add("reachable", statusFail, "bad cluster URL: "+err.Error(),
			"write redis://[user:password@]seed:port?cluster=yes[&addr=seed2:port...]")
		return f
	}
	ctx := context.Background()
	var shards []redis.ClusterShard
	var info map[string]string
	asked := ""
	for _, seed := range spec.Seeds {
		rdb := o.clusterClient(spec, seed)
		check := "seed " + seed
		if err := rdb.Ping(ctx).Err(); err != nil {
			f.add(check, statusWarn, "no answer: "+describeErr(err, o.timeout)+"; liblock asks the next seed for the slot map",
				"start it again, or list a live node of the cluster in the URL (addr=)")
			_ = rdb.Close()
			continue
		}
		if shards == nil {
			raw, ierr := rdb.ClusterInfo(ctx).Result()
			s, serr := rdb.ClusterShards(ctx).Result()
			switch {
			case ierr != nil || serr != nil:
				f.add(check, statusFail, fmt.Sprintf("answers, but CLUSTER INFO / CLUSTER SHARDS: %v", firstErr(ierr, serr)),
					"allow CLUSTER INFO and CLUSTER SHARDS for this user (liblock reads the slot map with them), and check the server is a cluster node")
				_ = rdb.Close()
				continue
			default:
				info, shards, asked = parseInfo(raw), s, seed
			}
		}
		f.add(check, statusOK, "answers", "")
		_ = rdb.Close()
	}
	if shards == nil {
		f.add("cluster", statusFail, "no seed gave the slot map: liblock cannot route a lock command", "start the cluster, or fix the seeds and credentials in the URL")
		return f
	}
	clusterStateRow(f, info, asked)
	minReplicas, primaries := o.shardRows(ctx, f, spec, shards)
	waitRow(f, "Cluster", cfg.WaitReplicas, minReplicas)

	// The data checks, on each shard's primary, with the URL's credentials.
	var runIDs []string
	for _, p := range primaries {
		sub := &nodeFacts{name: f.name + " shard " + p.addr, addr: p.addr, cluster: true, keyTag: tagIn(p.slots)}
		rdb := o.clusterClient(spec, p.addr)
		o.probeData(sub, rdb, "", spec.Username, cfg)
		_ = rdb.Close()
		f.rows = append(f.rows, sub.rows...)
		if sub.reachable {
			runIDs = append(runIDs, sub.runID)
			if !f.clockKnown && sub.clockKnown {
				f.offset, f.clockKnown = sub.offset, true
			}
		}
	}
	// The independence check compares the set of its primaries' run ids:
	// two URLs naming one cluster through other seeds are one node twice.
	if len(runIDs) > 0 {
		sort.Strings(runIDs)
		f.reachable, f.runID = true, strings.Join(runIDs, ",")
	}
	o.checkLockCycle(f, url, cfg)
	return f
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (o *doctorOpts) clusterClient(spec nodeurl.Spec, addr string) *redis.Client {
	return redis.NewClient(o.options(spec, addr, spec.Username, spec.Password, 0, spec.ServerName))
}

// clusterStateRow: the cluster serves every slot. With cluster_state:fail
// (slots unassigned, or a shard down without a replica to promote) the
// locks of those slots fail on this node; slots in PFAIL mean a shard is
// unreachable from some nodes, a failover may be coming.
func clusterStateRow(f *nodeFacts, info map[string]string, seed string) {
	state, assigned := info["cluster_state"], info["cluster_slots_assigned"]
	failing, _ := strconv.Atoi(info["cluster_slots_fail"])
	pfail, _ := strconv.Atoi(info["cluster_slots_pfail"])
	detail := fmt.Sprintf("%s says cluster_state:%s, %s of 16384 slots assigned", seed, dash(state), dash(assigned))
	switch {
	case state != "ok" || assigned != "16384" || failing > 0:
		f.add("cluster state", statusFail, fmt.Sprintf("%s, %d failing: locks on the slots not served are refused (this node counts as failed for them)", detail, failing),
			"assign every slot (redis-cli --cluster fix) and bring failed shards back or let their replicas take over")
	case pfail > 0:
		f.add("cluster state", statusWarn, fmt.Sprintf("%s, %d possibly failing (PFAIL): a shard is unreachable from some nodes; a failover may follow", detail, pfail),
			"check the shard primaries and the cluster bus between the nodes")
	default:
		f.add("cluster state", statusOK, detail, "")
	}
}

// shardPrimary is a shard's online primary and its slots.
type shardPrimary struct {
	addr  string
	slots []redis.SlotRange
}

// shardRows gives one row per shard (its primary, its slots, its online
// replicas) and returns the fewest online replicas of any shard and the
// primaries. The replicas online are the primary's own count (INFO
// replication: state=online): CLUSTER SHARDS reports a replica's health
// from its replication offset as gossiped, which Redis 7.0 shows as
// "loading" for a replica in sync.
func (o *doctorOpts) shardRows(ctx context.Context, f *nodeFacts, spec nodeurl.Spec, shards []redis.ClusterShard) (int, []shardPrimary) {
	least := -1
	var primaries []shardPrimary
	for _, s := range shards {
		var primary string
		listed := 0
		for _, n := range s.Nodes {
			addr := net.JoinHostPort(nodeHost(n), strconv.FormatInt(n.Port, 10))
			switch {
			case n.Role == "master" && n.Health == "online":
				primary = addr
			case n.Role == "replica" && n.Health != "failed":
				listed++
			}
		}
		if len(s.Slots) == 0 {
			continue // a primary without slots serves no lock
		}
		slots := slotRanges(s.Slots)
		if primary == "" {
			f.add("shard "+slots, statusFail, "no online primary serves slots "+slots+": their locks fail on this node",
				"bring the shard's primary back, or fail over to a replica (CLUSTER FAILOVER on it)")
			continue
		}
		primaries = append(primaries, shardPrimary{addr: primary, slots: s.Slots})
		replicas := listed
		rdb := o.clusterClient(spec, primary)
		if raw, err := rdb.Info(ctx, "replication").Result(); err == nil {
			replicas = onlineReplicas(parseInfo(raw))
		}
		_ = rdb.Close()
		if least < 0 || replicas < least {
			least = replicas
		}
		check := "shard " + primary
		if replicas == 0 {
			f.add(check, statusWarn, fmt.Sprintf("serves slots %s with no online replica: the shard's locks are lost with its primary, and WAIT cannot be acknowledged", slots),
				"add a replica to the shard (redis-cli --cluster add-node --cluster-slave)")
			continue
		}
		f.add(check, statusOK, fmt.Sprintf("serves slots %s, %d replica(s) online", slots, replicas), "")
	}
	return least, primaries
}

// onlineReplicas counts INFO replication's slaveN entries in state online.
func onlineReplicas(info map[string]string) int {
	n, _ := strconv.Atoi(info["connected_slaves"])
	online := 0
	for k := 0; k < n; k++ {
		if parseCSV(info["slave"+strconv.Itoa(k)])["state"] == "online" {
			online++
		}
	}
	return online
}

// tagIn returns a hash tag ("{n}") whose slot the ranges hold, so that
// the commands check's key lands on that shard and not in a MOVED.
func tagIn(rs []redis.SlotRange) string {
	for i := 0; i < 1<<20; i++ {
		tag := "{" + strconv.Itoa(i) + "}"
		slot := int64(engine.KeySlot(tag))
		for _, r := range rs {
			if slot >= r.Start && slot <= r.End {
				return tag
			}
		}
	}
	return ""
}

func nodeHost(n redis.Node) string {
	for _, h := range []string{n.IP, n.Endpoint, n.Hostname} {
		if h != "" && h != "?" {
			return h
		}
	}
	return "127.0.0.1"
}

// slotRanges writes a shard's slots as "0-5460" or "0-99,200-5460".
func slotRanges(rs []redis.SlotRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.FormatInt(r.Start, 10)
		if r.End != r.Start {
			parts[i] += "-" + strconv.FormatInt(r.End, 10)
		}
	}
	return strings.Join(parts, ",")
}
