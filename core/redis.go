//go:build !wasip1

package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// New returns a Client over the nodes in cfg, reached through liblock's own
// RESP transport, which keeps the node timeout on every request. It
// validates cfg but does not connect: connections are made on first use.
func New(cfg Config) (*Client, error) {
	t, err := DialTransport(cfg)
	if err != nil {
		return nil, err
	}
	c, err := NewWithTransport(t, cfg)
	if err != nil {
		_ = t.Close()
	}
	return c, err
}

// DialTransport returns the Transport that New runs on: liblock's RESP
// transport (commands written to every node, then the replies read, each
// request bounded by the node timeout and by the context). Hosts that carry out Redis I/O for the wasm
// module use it too. It validates cfg but does not connect.
func DialTransport(cfg Config) (Transport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newRespTransport(cfg.Nodes, cfg.nodeTimeout())
}

// NewFromClients returns a Client over existing go-redis clients, one per
// independent master; cfg.Nodes must be empty. Each client must have
// ContextTimeoutEnabled set: without it go-redis ignores deadlines, and a
// frozen node would stall every call for the client's read timeout. Close
// does not close these clients.
func NewFromClients(cfg Config, clients ...*redis.Client) (*Client, error) {
	if len(cfg.Nodes) != 0 {
		return nil, argError("nodes", "must be empty when clients are given")
	}
	if len(clients) == 0 {
		return nil, argError("clients", "at least one client is required")
	}
	for i, rc := range clients {
		if rc == nil {
			return nil, argError(fmt.Sprintf("clients[%d]", i), "nil client")
		}
		if !rc.Options().ContextTimeoutEnabled {
			return nil, argError(fmt.Sprintf("clients[%d]", i), "set Options.ContextTimeoutEnabled: go-redis ignores deadlines without it")
		}
	}
	return NewWithTransport(newRedisTransport(clients, cfg.nodeTimeout(), false), cfg)
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
	if i := strings.Index(rawURL, "://"); i >= 0 {
		rest := rawURL[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if colon := strings.Index(rest[:at], ":"); colon >= 0 {
				if pw := rest[colon+1 : at]; pw != "" {
					msg = strings.ReplaceAll(msg, pw, "xxxxx")
				}
			}
		}
	}
	return msg
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
