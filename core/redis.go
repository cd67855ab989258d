package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

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
	eng, err := engine.New(cfg.engineConfig(nodes), engine.SystemEnv())
	if err != nil {
		return nil, err
	}
	return newClient(eng, dialNode, cfg.nodeTimeout(), nil), nil
}

// DialTransport returns a Transport over go-redis clients made from cfg's
// node URLs, each request bounded by the node timeout. Clients made by New
// do not use it; it serves NewWithTransport users who want a ready one. It
// validates cfg but does not connect.
func DialTransport(cfg Config) (Transport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	clients := make([]*redis.Client, len(cfg.Nodes))
	for i, raw := range cfg.Nodes {
		opt, err := redis.ParseURL(raw)
		if err != nil {
			closeAll(clients)
			return nil, invalidArg(fmt.Sprintf("nodes[%d]", i), scrub(err.Error(), raw))
		}
		opt.ContextTimeoutEnabled = true
		opt.MaxRetries = -1
		clients[i] = redis.NewClient(opt)
	}
	return newRedisTransport(clients, cfg.nodeTimeout(), true), nil
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
	if err != nil {
		return nil, err
	}
	dial := func(ctx context.Context, node int, d *engine.Dial) (net.Conn, error) {
		if dialers[node] == nil {
			return dialNode(ctx, node, d)
		}
		return dialers[node](ctx, d.Network, d.Addr)
	}
	return newClient(eng, dial, cfg.nodeTimeout(), nil), nil
}

func closeAll(clients []*redis.Client) {
	for _, rc := range clients {
		if rc != nil {
			_ = rc.Close()
		}
	}
}

// scrub removes a URL's password from a message that might repeat it.
func scrub(msg, rawURL string) string {
	return engine.ScrubURL(msg, rawURL)
}

// redisTransport runs each node's command on its own go-redis client, all
// nodes in parallel, each under the node timeout.
type redisTransport struct {
	clients []*redis.Client
	names   []string
	timeout time.Duration
	owned   bool
}

func newRedisTransport(clients []*redis.Client, timeout time.Duration, owned bool) *redisTransport {
	names := make([]string, len(clients))
	for i, rc := range clients {
		names[i] = rc.Options().Addr
	}
	return &redisTransport{clients: clients, names: names, timeout: timeout, owned: owned}
}

func (t *redisTransport) Nodes() []string { return t.names }

func (t *redisTransport) Exec(ctx context.Context, cmds []Command) []Reply {
	replies := make([]Reply, len(cmds))
	last := -1
	for i, cmd := range cmds {
		if cmd != nil {
			last = i
		}
	}
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		switch {
		case cmd == nil:
		case i == last:
			// The caller's goroutine takes one node itself: with one node
			// there is no goroutine at all.
			replies[i] = t.do(ctx, i, cmd)
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[i] = t.do(ctx, i, cmd)
			}()
		}
	}
	wg.Wait()
	return replies
}

func (t *redisTransport) do(ctx context.Context, node int, cmd Command) Reply {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	args := make([]any, len(cmd))
	for i, a := range cmd {
		args[i] = a
	}
	v, err := t.clients[node].Do(ctx, args...).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return Reply{Nil: true}
	case err != nil:
		return Reply{Err: err}
	}
	switch v := v.(type) {
	case int64:
		return Reply{Int: v}
	case string:
		return Reply{Str: v}
	default:
		return Reply{Str: fmt.Sprint(v)}
	}
}

func (t *redisTransport) Close() error {
	if t.owned {
		closeAll(t.clients)
	}
	return nil
}
