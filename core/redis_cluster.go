package core

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/liblock/liblock/core/engine"
	"github.com/redis/go-redis/v9"
)

// NewFromUniversalClients is NewFromClients for go-redis clients of any
// kind liblock can lock on, one per node of the quorum: a *redis.Client
// (a standalone master, taken as NewFromClients takes it) or a
// *redis.ClusterClient (a whole Redis Cluster, one vote: its Addrs are the
// seeds, its Username, Password, ClientName, TLSConfig and Dialer apply
// to every shard connection, as a cluster=yes node URL's do; see README
// "Redis Cluster nodes"). Any other kind (a *redis.Ring, whose shards are
// independent servers the engine cannot count as one vote) is refused
// naming clients[i]. A ClusterClient with ReadOnly, RouteByLatency or
// RouteRandomly is refused too: a lock is a write, sent to the shards'
// primaries only.
func NewFromUniversalClients(cfg Config, clients ...redis.UniversalClient) (*Client, error) {
	if len(cfg.Nodes) != 0 {
		return nil, invalidArg("nodes", "must be empty when clients are given")
	}
	if cfg.TLS != nil {
		return nil, invalidArg("tls", "must be nil when clients are given: each client's TLSConfig applies")
	}
	if cfg.NodeTLS != nil {
		return nil, invalidArg("nodetls", "must be nil when clients are given: each client's TLSConfig applies")
	}
	if len(clients) == 0 {
		return nil, invalidArg("clients", "at least one client is required")
	}
	nodes := make([]engine.Node, len(clients))
	dials := make([]dialFunc, len(clients))
	for i, uc := range clients {
		arg := fmt.Sprintf("clients[%d]", i)
		switch rc := uc.(type) {
		case *redis.Client:
			if rc == nil {
				return nil, invalidArg(arg, "nil client")
			}
			opt := rc.Options()
			nodes[i] = engine.Node{Network: opt.Network, Addr: opt.Addr, Username: opt.Username,
				Password: opt.Password, DB: opt.DB, ClientName: opt.ClientName}
			dials[i] = dialWith(opt.Dialer, nil)
		case *redis.ClusterClient:
			if rc == nil {
				return nil, invalidArg(arg, "nil client")
			}
			opt := rc.Options()
			switch {
			case len(opt.Addrs) == 0:
				return nil, invalidArg(arg, "a ClusterClient without Addrs names no seed")
			case opt.ReadOnly || opt.RouteByLatency || opt.RouteRandomly:
				return nil, invalidArg(arg, "ReadOnly, RouteByLatency and RouteRandomly route to replicas; a lock is a write, sent to the shards' primaries only (unset them)")
			}
			n := engine.Node{Network: "tcp", Addr: opt.Addrs[0], Cluster: true, Seeds: append([]string(nil), opt.Addrs...),
				Username: opt.Username, Password: opt.Password, ClientName: opt.ClientName}
			if opt.Dialer == nil && opt.TLSConfig != nil {
				// go-redis makes each shard's TLS connection with the
				// cluster's TLSConfig; so does the engine's dial.
				n.TLS = true
				if h, _, err := net.SplitHostPort(opt.Addrs[0]); err == nil {
					n.ServerName = h
				}
			}
			nodes[i] = n
			dials[i] = dialWith(opt.Dialer, opt.TLSConfig)
		default:
			return nil, invalidArg(arg, fmt.Sprintf("a %T: liblock locks on a *redis.Client (one master) or a *redis.ClusterClient (a whole cluster)", uc))
		}
	}
	eng, err := engine.New(cfg.engineConfig(nodes), engine.SystemEnv())
	var ae *ArgumentError
	if errors.As(err, &ae) && strings.HasPrefix(ae.Arg, "nodes[") {
		return nil, invalidArg("clients"+strings.TrimPrefix(ae.Arg, "nodes"), strings.ReplaceAll(ae.Reason, "nodes[", "clients["))
	}
	if err != nil {
		return nil, err
	}
	dial := func(ctx context.Context, node int, d *engine.Dial) (net.Conn, error) {
		return dials[node](ctx, node, d)
	}
	c := newClient(eng, dial, cfg.nodeTimeout(), nil)
	c.tel = newTelemetry(cfg, nodes)
	c.quietReports(cfg)
	c.logger = cfg.Logger
	return c, nil
}

// dialWith dials with a go-redis client's Dialer (which makes its TLS
// itself) when it has one, else as the driver does, with base as the TLS
// settings of a connection the engine asks TLS for.
func dialWith(dialer func(context.Context, string, string) (net.Conn, error), base *tls.Config) dialFunc {
	if dialer == nil {
		return dialTLS(base, nil)
	}
	return func(ctx context.Context, _ int, d *engine.Dial) (net.Conn, error) {
		return dialer(ctx, d.Network, d.Addr)
	}
}
