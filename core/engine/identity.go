package engine

import (
	"errors"
	"strconv"
	"strings"
)

// What a new data connection learns of its server (INFO, in the
// handshake, before the connection carries anything):
//
//   - run_id: one server process. Two nodes of the engine whose
//     connections reach one run_id are one server under two names
//     (127.0.0.1 and localhost, two DNS names): it would grant a lock twice
//     and fake a quorum. The node found second is refused — its queued
//     requests fail before any is written, so it never grants — and so is
//     every acquire of the engine from then on (Engine.misconfig), with
//     the error the configuration check gives two identical URLs. The
//     first node keeps serving (it is one server, one vote): locks already
//     held are released there.
//   - cluster_enabled:1 on a node whose URL is not a cluster's: the server
//     would answer -MOVED for the keys of other shards; refused as above,
//     naming cluster=yes.
//   - connected_slaves: a Sentinel or Cluster primary with no replica at
//     all cannot acknowledge the WAIT that wait_replicas asks by default:
//     the connection fails at once naming the fix, instead of every grant
//     failing after the WAIT's timeout (wait.go, waitNone).
//
// A server that refuses INFO (an ACL without it) is not checked: the
// connection goes on as before.
type serverInfo struct {
	runID    string
	cluster  bool
	replicas int // connected_slaves; -1 when not said
}

// parseInfo reads the fields of an INFO answer the checks use.
func parseInfo(s string) serverInfo {
	si := serverInfo{replicas: -1}
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		line = strings.TrimSuffix(line, "\r")
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "run_id":
			si.runID = v
		case "cluster_enabled":
			si.cluster = v == "1"
		case "connected_slaves":
			if n, err := strconv.Atoi(v); err == nil {
				si.replicas = n
			}
		}
	}
	return si
}

// wantsInfo reports whether a new connection of n asks INFO in its
// handshake: a node's data connection (its identity, whether it is a
// cluster's), and a cluster shard's whose replica count decides.
func (n *node) wantsInfo() bool {
	if n.sub || n.cl != nil {
		return false // a cluster's own connections ask for the slot map
	}
	if n.parent != nil {
		return n.waitDefault && n.wait > 0
	}
	return true
}

// identify handles the handshake's INFO answer. It reports whether the
// connection may go on; when not, the node has failed.
func (n *node) identify(e *Engine, r Reply) bool {
	if r.Err != nil {
		return true // INFO not allowed: nothing to check
	}
	si := parseInfo(r.Str)
	if si.cluster && !n.spec.Cluster && n.parent == nil {
		err := invalidArg(indexed("nodes", n.idx), n.name+" is a Redis Cluster node (cluster_enabled:1): add cluster=yes to its URL "+
			"(redis://host:port?cluster=yes), or the resources of other shards fail with MOVED")
		n.refuse(e, err)
		return false
	}
	if si.runID != "" && n.parent == nil {
		n.runID = si.runID
		for _, o := range e.nodes {
			if o != n && o.runID == si.runID {
				a, b := o, n
				if a.idx > b.idx {
					a, b = b, a
				}
				err := invalidArg(indexed("nodes", b.idx), "the same server as "+indexed("nodes", a.idx)+" ("+b.name+" and "+a.name+
					" answer with one run_id): one server listed twice would grant a lock twice and fake a quorum; list each server once")
				n.refuse(e, err)
				return false
			}
		}
	}
	if n.waitDefault && n.wait > 0 && si.replicas == 0 {
		n.fail(e, errorString("the primary has no replica, and wait_replicas (by default 1 on a Sentinel or Cluster node) "+
			"asks every grant to reach one: add replicas, or set wait_replicas=0 to lock without the replica check "+
			"(a failover may then lose a grant)"))
		return false
	}
	return true
}

// refuse makes node n fail, now and for the engine's life, with err (a
// configuration error found at connect), and every acquire of the engine
// with it.
func (n *node) refuse(e *Engine, err error) {
	n.refused = err
	if e.misconfig == nil {
		e.misconfig = err
	}
	n.fail(e, err)
}

// misconfigured returns the configuration error found at connect that an
// acquire reports instead of the nodes' failures, or err.
func (e *Engine) misconfigured(err error) error {
	if e.misconfig != nil && err != nil && errors.Is(err, ErrUnavailable) {
		return e.misconfig
	}
	return err
}
