package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
)

// FenceSHA is the SHA-1 of core/engine/fence.lua, by which EVALSHA runs it
// (engine.FenceSHA; a test checks they agree).
const FenceSHA = "43ec98bc2553b904ba4ff625d51c36073d402a7c"

// FenceBody is a line of fence.lua's body that no other script of the
// engine contains (a test checks that against the scripts): it matches the
// EVAL that carries the script to a node that has not run it yet.
const FenceBody = "if fence < cur then"

// FencePatterns are the patterns that match the fence round's command and
// no other command of the engine.
func FencePatterns() [][]byte { return [][]byte{[]byte(FenceSHA), []byte(FenceBody)} }

// Route is one node behind the proxy.
type Route struct {
	Target string // the node's host:port
	PID    int    // its process, signalled on a match
}

// Config configures a Proxy.
type Config struct {
	Routes   []Route
	Patterns [][]byte       // matched in the client-to-node stream; none: never fires
	Signal   syscall.Signal // SIGSTOP or SIGKILL
	Faults   int            // how many routes may fire, at most once each; 0 means 1
}

// Proxy forwards each route's listener to its node. Its methods are safe
// for concurrent use.
type Proxy struct {
	cfg       Config
	listeners []net.Listener

	mu     sync.Mutex
	fired  []int // route indexes, in firing order
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on 127.0.0.1:0 for every route and forwards.
func Start(cfg Config) (*Proxy, error) {
	if len(cfg.Routes) == 0 {
		return nil, errors.New("faultproxy: no route")
	}
	if cfg.Signal != syscall.SIGSTOP && cfg.Signal != syscall.SIGKILL {
		return nil, fmt.Errorf("faultproxy: signal %v: want SIGSTOP or SIGKILL", cfg.Signal)
	}
	if cfg.Faults <= 0 {
		cfg.Faults = 1
	}
	p := &Proxy{cfg: cfg, conns: map[net.Conn]struct{}{}}
	for _, pat := range cfg.Patterns {
		if len(pat) == 0 {
			return nil, errors.New("faultproxy: empty pattern")
		}
	}
	for i, r := range cfg.Routes {
		if r.PID <= 0 {
			p.Close()
			return nil, fmt.Errorf("faultproxy: route %d: no pid", i)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			p.Close()
			return nil, err
		}
		p.listeners = append(p.listeners, l)
	}
	for i, l := range p.listeners {
		p.wg.Add(1)
		go p.accept(i, l)
	}
	return p, nil
}

// Addrs are the listeners' host:port, in route order.
func (p *Proxy) Addrs() []string {
	out := make([]string, len(p.listeners))
	for i, l := range p.listeners {
		out[i] = l.Addr().String()
	}
	return out
}

// Fired returns the indexes of the routes whose node was signalled, in the
// order it happened.
func (p *Proxy) Fired() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.fired...)
}

// Close stops listening, closes every connection and waits for the
// forwarding goroutines. It signals nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	for _, l := range p.listeners {
		_ = l.Close()
	}
	p.wg.Wait()
	return nil
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) accept(route int, l net.Listener) {
	defer p.wg.Done()
	for {
		client, err := l.Accept()
		if err != nil {
			return
		}
		if !p.track(client) {
			continue
		}
		p.wg.Add(1)
		go p.serve(route, client)
	}
}

func (p *Proxy) serve(route int, client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.cfg.Routes[route].Target)
	if err != nil || !p.track(server) {
		return
	}
	defer p.untrack(server)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_, _ = io.Copy(client, server)
		// The node closed or died: the client sees its connection end.
		_ = client.Close()
		_ = server.Close()
	}()
	buf := make([]byte, 32<<10)
	m := matcher{patterns: p.cfg.Patterns}
	for {
		n, err := client.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if len(m.patterns) > 0 && p.armed(route) && m.feed(chunk) {
				p.fire(route)
			}
			if _, werr := server.Write(chunk); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// matcher finds patterns in a stream read in chunks: it keeps the stream's
// last bytes (one fewer than the longest pattern), so a pattern split across
// two reads is found too.
type matcher struct {
	patterns [][]byte
	tail     []byte
}

// feed reports whether a pattern ends in chunk.
func (m *matcher) feed(chunk []byte) bool {
	longest := 0
	for _, p := range m.patterns {
		longest = max(longest, len(p))
	}
	window := append(m.tail, chunk...)
	found := false
	for _, p := range m.patterns {
		if bytes.Contains(window, p) {
			found = true
		}
	}
	if keep := longest - 1; len(window) > keep {
		window = window[len(window)-keep:]
	}
	m.tail = append(m.tail[:0], window...)
	return found
}

// armed: the route has not fired and the budget is not spent.
func (p *Proxy) armed(route int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.fired) >= p.cfg.Faults {
		return false
	}
	for _, r := range p.fired {
		if r == route {
			return false
		}
	}
	return true
}

// fire signals the route's node, once, within the budget. Holding the lock
// while signalling makes two routes matching at once take turns.
func (p *Proxy) fire(route int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.fired) >= p.cfg.Faults {
		return
	}
	for _, r := range p.fired {
		if r == route {
			return
		}
	}
	_ = syscall.Kill(p.cfg.Routes[route].PID, p.cfg.Signal)
	p.fired = append(p.fired, route)
}
