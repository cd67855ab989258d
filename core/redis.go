package core

import (
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
	c.rawDial = true // set before the Client is shared, as tel and logger below
	c.tel = newTelemetry(cfg, nodes)
	c.quietReports(cfg)
	c.logger = cfg.Logger
	return c, nil
}

// NewFromClients returns a Client over the nodes of existing go-redis
// clients, one per independent master; cfg.Nodes must be empty. The engine
// opens its own connections with each client's dialer (TLS and all) and
// handshake settings (user name, password, db, client name); the clients
// themselves carry no lock traffic, and Close does not close them.
func NewFromClients(cfg Config, clients ...*redis.Client) (*Client, error) {
	// A *redis.Client is one master to NewFromUniversalClients too (a nil
	// one, typed, is refused there naming clients[i]).
	ucs := make([]redis.UniversalClient, len(clients))
	for i, c := range clients {
		ucs[i] = c
	}
	return NewFromUniversalClients(cfg, ucs...)
}
