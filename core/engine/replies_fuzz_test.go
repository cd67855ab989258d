package engine

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzNodeReplies plays three nodes (plain, Sentinel or Cluster) whose
// answers to one kind of command come from the fuzzer, the rest answered
// as Redis does, and holds the engine to: no panic, no hang (every
// acquire ends once time passes), and no grant unless a quorum of nodes
// answered their acquire command with a grant's shape; no command written
// to a node whose ROLE did not say master; the engine closes.

// Which command a run's fuzzed bytes answer (the input's first byte).
const (
	fzAcquire   = iota // SET NX, or the acquire script of the primitive
	fzSentinel         // SENTINEL get-master-addr-by-name
	fzRole             // ROLE on a primary a sentinel named
	fzCluster          // CLUSTER SHARDS (and SLOTS after an unknown-command error)
	fzShard            // a cluster shard's answer to the acquire: MOVED, ASK...
	fzHandshake        // PING
	fzAny              // every command
	fzModes
)

// Primitives (the input's second byte).
const (
	fpPlain = iota
	fpToken
	fpFence
	fpSemaphore
	fpRead
	fpWrite
	fpMulti
	fpElection
	fpCount
)

const (
	fzPrimary = "10.0.0.1:6379" // the primary the honest sentinel names
	fzShardA  = "10.0.0.2:7000" // the honest cluster's one shard
)

type replyHost struct {
	t       *testing.T
	e       *Engine
	env     *fakeEnv
	mode    int
	fuzzed  [][]byte // the fuzzer's replies, used in turn
	next    int
	splitAt int
	addr    map[ConnID]string // a connection's dialed address
	node    map[ConnID]int
	master  map[ConnID]bool // ROLE answered with master's shape
	// shaped[i]: node i answered its acquire command with a grant's shape.
	shaped [3]bool
	done   map[OpID]Action
}

func (h *replyHost) nextFuzzed() []byte {
	if len(h.fuzzed) == 0 {
		return nil
	}
	b := h.fuzzed[h.next%len(h.fuzzed)]
	h.next++
	return b
}

// isAcquire: the command is an acquire's (SET NX, or an acquire script).
func isAcquire(args []string) bool {
	if len(args) > 0 && strings.EqualFold(args[0], "SET") {
		return true
	}
	if len(args) < 2 || (args[0] != "EVALSHA" && args[0] != "EVAL") {
		return false
	}
	for _, sc := range []*script{acquireTokenScript, acquireFenceScript, semAcquireScript, rwAcquireScript, multiAcquireScript} {
		if args[1] == sc.sha || args[1] == sc.src {
			return true
		}
	}
	return false
}

// grantShaped says whether b, the fuzzed answer to an acquire command,
// starts with a reply that may grant it, read from the bytes (not through
// the decoder under test): +OK to SET, an integer to a mutex's script, an
// array of integers to a semaphore's.
func grantShaped(args []string, b []byte) bool {
	if strings.EqualFold(args[0], "SET") {
		return bytes.HasPrefix(b, []byte("+OK\r\n"))
	}
	if args[1] == semAcquireScript.sha || args[1] == semAcquireScript.src {
		return bytes.HasPrefix(b, []byte("*")) && !bytes.HasPrefix(b, []byte("*-"))
	}
	return bytes.HasPrefix(b, []byte(":"))
}

// honest answers a command as a redis-server with nothing held does.
func (h *replyHost) honest(args []string) []byte {
	name := strings.ToUpper(args[0])
	switch {
	case name == "PING":
		return []byte("+PONG\r\n")
	case name == "ROLE":
		return []byte("*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n")
	case name == "SENTINEL":
		return []byte("*2\r\n$8\r\n10.0.0.1\r\n$4\r\n6379\r\n")
	case name == "CLUSTER":
		return []byte("*1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*10\r\n$2\r\nid\r\n$1\r\nx\r\n$4\r\nport\r\n:7000\r\n$2\r\nip\r\n$8\r\n10.0.0.2\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$6\r\nhealth\r\n$6\r\nonline\r\n")
	case name == "SET":
		return []byte("+OK\r\n")
	case name == "SUBSCRIBE" || name == "SSUBSCRIBE":
		return subscribeReplies(strings.ToLower(name), args[1:])
	case (name == "EVALSHA" || name == "EVAL") && (args[1] == semAcquireScript.sha || args[1] == semAcquireScript.src):
		return []byte("*3\r\n:0\r\n:1\r\n:1\r\n")
	}
	return []byte(":1\r\n")
}

func subscribeReplies(kind string, chans []string) []byte {
	var b []byte
	for i, ch := range chans {
		b = append(b, "*3\r\n"...)
		b = appendBulk(b, kind)
		b = appendBulk(b, ch)
		b = append(b, ':')
		b = appendLen(b, i+1)
		b = append(b, '\r', '\n')
	}
	return b
}

// answer decides what the node at addr answers to the commands of one
// write.
func (h *replyHost) answer(c ConnID, data []byte) []byte {
	addr := h.addr[c]
	var out []byte
	for len(data) > 0 {
		r, n, err := parseReply(data)
		if err != nil || n == 0 {
			h.t.Fatalf("the engine wrote %q, not whole commands: %v", data, err)
		}
		data = data[n:]
		args := make([]string, len(r.Elems))
		for i, x := range r.Elems {
			args[i] = x.Str
		}
		name := strings.ToUpper(args[0])
		acq := isAcquire(args)
		if acq && h.e.nodes[h.node[c]].isSentinel() && !h.master[c] {
			h.t.Fatalf("%s written to %s, whose ROLE did not say master", name, addr)
		}
		fuzz := h.mode == fzAny ||
			(h.mode == fzAcquire && acq) ||
			(h.mode == fzSentinel && name == "SENTINEL") ||
			(h.mode == fzRole && name == "ROLE") ||
			(h.mode == fzCluster && name == "CLUSTER") ||
			(h.mode == fzShard && acq && addr == fzShardA) ||
			(h.mode == fzHandshake && name == "PING")
		var rep []byte
		if fuzz {
			rep = h.nextFuzzed()
		} else {
			rep = h.honest(args)
		}
		if name == "ROLE" {
			h.master[c] = bytes.HasPrefix(rep, []byte("*3\r\n$6\r\nmaster\r\n"))
		}
		if acq {
			h.shaped[h.node[c]] = !fuzz || grantShaped(args, rep)
		}
		out = append(out, rep...)
	}
	return out
}

func (h *replyHost) run() {
	for steps := 0; ; steps++ {
		if steps > 100000 {
			h.t.Fatal("the engine keeps emitting actions")
		}
		a, ok := h.e.Next()
		if !ok {
			return
		}
		switch a.Kind {
		case ActOpen:
			h.addr[a.Conn] = a.Dial.Addr
			h.node[a.Conn] = a.Node
			switch a.Dial.Addr {
			case "h:1", "h:2", "h:3", "s:1", "s:2", fzPrimary, "c:1", fzShardA:
				h.e.Opened(a.Conn)
			default: // an address the fuzzed replies made up
				h.e.ConnFailed(a.Conn, errorString("connection refused"))
			}
		case ActWrite:
			rep := h.answer(a.Conn, a.Data)
			// Handed over in two pieces, cut where the input says.
			cut := min(h.splitAt, len(rep))
			h.e.Received(a.Conn, rep[:cut])
			if h.e.nodeOf(a.Conn) != nil {
				h.e.Received(a.Conn, rep[cut:])
			}
		case ActDone:
			h.done[a.Op] = a
		}
	}
}

func FuzzNodeReplies(f *testing.F) {
	sep := []byte("\x00\x00")
	for mode := range fzModes {
		for prim := range fpCount {
			for _, s := range []string{"+OK\r\n", ":1\r\n", "+FOO\r\n", "$2\r\nOK\r\n", ":0\r\n", "*0\r\n", "$0\r\n\r\n", "+\r\n",
				"*3\r\n$5\r\nslave\r\n$8\r\n10.0.0.9\r\n:6379\r\n", "-MOVED 1 10.0.0.2:7000\r\n", "-ASK 5 10.0.0.2:7000\r\n",
				"$2147483647\r\n", "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", "*2\r\n$8\r\n10.0.0.1\r\n$4\r\n6379\r\n"} {
				f.Add(append([]byte{byte(mode), byte(prim), 3}, s...))
			}
		}
	}
	f.Add(append(append([]byte{fzAcquire, fpPlain, 0}, "+OK\r\n"...), append(sep, "+NOPE\r\n"...)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 {
			return
		}
		mode, prim, split := int(in[0])%fzModes, int(in[1])%fpCount, int(in[2])
		h := &replyHost{t: t, env: &fakeEnv{}, mode: mode, splitAt: split, fuzzed: bytes.Split(in[3:], sep),
			addr: map[ConnID]string{}, node: map[ConnID]int{}, master: map[ConnID]bool{}, done: map[OpID]Action{}}
		zero := 0
		nodes := []Node{{Network: "tcp", Addr: "h:1"}, {Network: "tcp", Addr: "h:2"}, {Network: "tcp", Addr: "h:3"}}
		switch mode {
		case fzSentinel, fzRole:
			nodes[0] = Node{Network: "tcp", Addr: "s:1", MasterName: "m", Sentinels: []string{"s:1", "s:2"}}
		case fzCluster, fzShard:
			nodes[0] = Node{Network: "tcp", Addr: "c:1", Cluster: true, Seeds: []string{"c:1"}}
		case fzAny:
			nodes[0] = Node{Network: "tcp", Addr: "s:1", MasterName: "m", Sentinels: []string{"s:1", "s:2"}}
			nodes[1] = Node{Network: "tcp", Addr: "c:1", Cluster: true, Seeds: []string{"c:1"}}
		}
		e, err := New(Config{Nodes: nodes, NodeTimeout: 50 * time.Millisecond, WaitReplicas: &zero}, h.env)
		if err != nil {
			t.Fatal(err)
		}
		h.e = e
		req := AcquireRequest{Resource: "r{x}", TTL: 10 * time.Second}
		switch prim {
		case fpToken:
			req.Token = "0123456789abcdef-token"
		case fpFence:
			req.Fence = true
		case fpSemaphore:
			req.Permits = 3
		case fpRead:
			req.Mode = ModeRead
		case fpWrite:
			req.Mode = ModeWrite
		case fpMulti:
			req.Resources = []string{"s{x}"}
		case fpElection:
			req.Election, req.Value = true, "me"
		}
		op, err := e.Acquire(req)
		if err != nil {
			t.Fatal(err)
		}
		h.run()
		// Time passes: whatever was left unanswered times out.
		for i := 0; i < 50 && h.done[op].Kind == 0; i++ {
			h.env.now += 20 * time.Millisecond
			e.Tick()
			h.run()
		}
		d, ok := h.done[op]
		if !ok {
			t.Fatal("the acquire never ended")
		}
		if d.Err == nil {
			shaped := 0
			for _, s := range h.shaped {
				if s {
					shaped++
				}
			}
			if shaped < e.Quorum() {
				t.Fatalf("granted with %d of 3 nodes answering with a grant's shape (replies %q)", shaped, h.fuzzed)
			}
			rel, err := e.Release(d.Lock)
			if err != nil {
				t.Fatal(err)
			}
			h.run()
			for i := 0; i < 50 && h.done[rel].Kind == 0; i++ {
				h.env.now += 20 * time.Millisecond
				e.Tick()
				h.run()
			}
		}
		e.Close()
		h.run()
		for i := 0; i < 100 && !e.Closed(); i++ {
			h.env.now += 50 * time.Millisecond
			e.Tick()
			h.run()
		}
		if !e.Closed() {
			t.Fatal("the engine never closed")
		}
	})
}
