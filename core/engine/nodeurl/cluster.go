package nodeurl

import (
	"errors"
	"strconv"
	"strings"
)

// Redis Cluster node URLs: a node of the quorum that is a whole Redis
// Cluster, reached through seed addresses. A node URL is one when its query
// has cluster=yes; it is then read as go-redis v9.23.0's
// redis.ParseClusterURL reads it (the URL's host is the first seed, every
// addr= one more; the URL's credentials, TLS and client_name apply to every
// connection to every shard), with liblock's own refusals:
//
//	redis://[user[:password]@]seed1[:port]?cluster=yes[&addr=seed2:port...][&options]
//	rediss://...   (TLS to every shard)
//
// cluster=yes is liblock's: go-redis has no such option (its ParseURL
// refuses it, its ParseClusterURL needs no marker), and liblock reads one
// URL syntax for every node, so that a plain URL keeps meaning one
// standalone server. true and 1 are accepted for yes; any other value is
// refused. Refused too: cluster with master_name (a node is a Cluster or a
// Sentinel-managed primary, not both), a db other than 0 (a Cluster has
// db 0 only), and read_only, route_by_latency and route_randomly (a lock
// is a write: liblock sends lock commands to the shards' primaries only).
// There is no unix:// form.

// isCluster reports whether the query asks for a Cluster node.
func isCluster(q map[string][]string) bool {
	_, ok := q["cluster"]
	return ok
}

// parseCluster is redis.ParseClusterURL, read into a Spec, plus liblock's
// refusals.
func parseCluster(u parsedURL) (Spec, error) {
	s := Spec{Network: "tcp", Username: u.username, Password: u.password, Cluster: true}
	h, addr := hostPortWithDefaults(u.host)
	s.Seeds = append(s.Seeds, addr)
	switch u.scheme {
	case "rediss":
		s.TLS, s.ServerName = true, h
	case "redis":
	default:
		return Spec{}, errors.New("redis: invalid URL scheme: " + u.scheme + " (a cluster node is redis:// or rediss://)")
	}
	q := queryOptions{q: parseQuery(u.rawQuery)}
	if q.has("master_name") {
		return Spec{}, errors.New("redis: cluster: not with master_name: a node is either a Redis Cluster (cluster=yes) or a Sentinel-managed primary (master_name=), not both")
	}
	switch v := q.string("cluster"); v {
	case "yes", "true", "1":
	default:
		return Spec{}, errors.New("redis: cluster: must be yes (or true, 1) to make the node a Redis Cluster, got " + strconv.Quote(v) + "; drop cluster= for a standalone server")
	}
	// A path db, as go-redis's ParseURL would read it: a Cluster has db 0
	// only (go-redis's ParseClusterURL ignores the path; liblock refuses
	// what it cannot honour).
	f := strings.FieldsFunc(u.path, func(r rune) bool { return r == '/' })
	dbText := ""
	switch len(f) {
	case 0:
	case 1:
		dbText = f[0]
	default:
		return Spec{}, errors.New("redis: invalid URL path: " + u.path)
	}
	if v := q.string("db"); v != "" {
		dbText = v
	}
	if dbText != "" && dbText != "0" {
		return Spec{}, errors.New("redis: cluster: db " + strconv.Quote(dbText) + ": a Redis Cluster has db 0 only (drop the /db path and db=)")
	}
	q.int("protocol")
	s.ClientName = q.string("client_name")
	q.int("max_redirects")
	readOnly := q.bool("read_only")
	byLatency := q.bool("route_by_latency")
	randomly := q.bool("route_randomly")
	q.poolOptions()
	q.duration("conn_max_idle_time")
	q.duration("conn_max_lifetime")
	if err := q.skipVerify(&s); err != nil {
		return Spec{}, err
	}
	addrs, err := q.addrs()
	if err != nil {
		return Spec{}, err
	}
	s.Seeds = append(s.Seeds, addrs...)
	if err := q.unexpected(); err != nil {
		return Spec{}, err
	}
	switch {
	case readOnly:
		return Spec{}, errors.New("redis: read_only: a lock is a write; liblock sends lock commands to the shards' primaries only (drop read_only)")
	case byLatency:
		return Spec{}, errors.New("redis: route_by_latency: a lock is a write; liblock sends lock commands to the shards' primaries only (drop route_by_latency)")
	case randomly:
		return Spec{}, errors.New("redis: route_randomly: a lock is a write; liblock sends lock commands to the shards' primaries only (drop route_randomly)")
	}
	s.Addr = s.Seeds[0]
	return s, nil
}
