package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/liblock/liblock/core/engine"
	"github.com/redis/go-redis/v9"
)

// New returns a Client over the nodes in cfg. It validates cfg but does not
// connect: connections are made on first use, by the engine's rules (one
// per node, commands pipelined, a new connection carries commands only after
// the node answered its handshake).
func New(cfg Config) (*Client, error) {
	nodes, err := engine.ParseNodes(cfg.Nodes)
	if err != nil {
		return nil, err
	}
	if err := cfg.checkNodeTLS(); err != nil {
		return nil, err
	}
	eng, err := engine.New(cfg.engineConfig(nodes), engine.SystemEnv())
	if err != nil {
		return nil, err
	}
	c := newClient(eng, dialTLS(cfg.TLS, cfg.NodeTLS), cfg.nodeTimeout(), nil)
	c.tel = newTelemetry(cfg, nodes)
	return c, nil
}

// NewFromClients returns a Client over the nodes of existing go-redis
// clients, one per independent master; cfg.Nodes must be empty. The engine
// opens its own connections with each client's dialer (TLS and all) and
// handshake settings (user name, password, db, client name); the clients
// themselves carry no lock traffic, and Close does not close them.
func NewFromClients(cfg Config, clients ...*redis.Client) (*Client, error) {
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
	dialers := make([]func(context.Context, string, string) (net.Conn, error), len(clients))
	for i, rc := range clients {
		if rc == nil {
			return nil, invalidArg(fmt.Sprintf("clients[%d]", i), "nil client")
		}
		opt := rc.Options()
		nodes[i] = engine.Node{Network: opt.Network, Addr: opt.Addr, Username: opt.Username,
			Password: opt.Password, DB: opt.DB, ClientName: opt.ClientName}
		dialers[i] = opt.Dialer
	}
	eng, err := engine.New(cfg.engineConfig(nodes), engine.SystemEnv())
	var ae *ArgumentError
	if errors.As(err, &ae) && strings.HasPrefix(ae.Arg, "nodes[") {
		// The engine's nodes are the caller's clients.
		return nil, invalidArg("clients"+strings.TrimPrefix(ae.Arg, "nodes"), strings.ReplaceAll(ae.Reason, "nodes[", "clients["))
	}
	if err != nil {
		return nil, err
	}
	dial := func(ctx context.Context, node int, d *engine.Dial) (net.Conn, error) {
		if dialers[node] == nil {
			return dialNode(ctx, node, d)
		}
		return dialers[node](ctx, d.Network, d.Addr)
	}
	c := newClient(eng, dial, cfg.nodeTimeout(), nil)
	c.tel = newTelemetry(cfg, nodes)
	return c, nil
}
