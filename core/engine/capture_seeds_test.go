package engine

import (
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/require"
)

// TestCaptureFuzzSeeds writes the fuzz targets' seed corpora
// (testdata/fuzz/FuzzParseReply, FuzzNodeReplies) from what real
// redis-servers answer to the engine's commands: every primitive acquired
// and released on plain nodes, through Sentinel and on a Redis Cluster,
// plus ROLE of a replica and CLUSTER SLOTS. It runs only when asked
// (LIBLOCK_CAPTURE_SEEDS=1): the seeds are committed, and `go test` runs
// them.
func TestCaptureFuzzSeeds(t *testing.T) {
	if os.Getenv("LIBLOCK_CAPTURE_SEEDS") == "" {
		t.Skip("set LIBLOCK_CAPTURE_SEEDS=1 to capture the fuzz seeds again")
	}
	rec := map[string][]byte{}
	plain := redistest.Start(t, 3)
	var nodes []Node
	for _, n := range plain.Nodes {
		nodes = append(nodes, Node{Network: "tcp", Addr: n.Addr()})
	}
	captureRun(t, nodes, rec, "", nil)

	s := redistest.StartSentinel(t, 1, 2)
	var sents []string
	for _, n := range s.Sentinels {
		sents = append(sents, n.Addr())
	}
	sn := Node{Network: "tcp", Addr: sents[0], MasterName: redistest.SentinelMaster, Sentinels: sents}
	captureRun(t, []Node{sn}, rec, "sentinel ", nil)
	rec["ROLE replica"] = rawReply(t, s.Data[1].Addr(), "ROLE")
	rec["SENTINEL unknown master"] = rawReply(t, sents[0], "SENTINEL", "get-master-addr-by-name", "nobody")

	rc := redistest.StartRedisCluster(t, 3, 0)
	var seeds []string
	for _, n := range rc.Nodes {
		seeds = append(seeds, n.Addr())
	}
	cn := Node{Network: "tcp", Addr: seeds[0], Cluster: true, Seeds: seeds}
	zero := 0 // no replicas to WAIT for
	captureRun(t, []Node{cn}, rec, "cluster ", &zero)
	rec["CLUSTER SLOTS"] = rawReply(t, seeds[0], "CLUSTER", "SLOTS")
	for _, n := range rc.Nodes { // a MOVED from every node but the key's own
		if r := rawReply(t, n.Addr(), "SET", "moved-key", "v"); strings.HasPrefix(string(r), "-MOVED") {
			rec["MOVED"] = r
		}
	}

	names := make([]string, 0, len(rec))
	for k := range rec {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		file := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, name)
		writeSeed(t, "FuzzParseReply", "real-"+file, rec[name])
		mode, prim := seedMode(name)
		writeSeed(t, "FuzzNodeReplies", "real-"+file, append([]byte{byte(mode), byte(prim), 3}, rec[name]...))
	}
}

// seedMode is the FuzzNodeReplies mode and primitive a captured reply
// stands in for.
func seedMode(name string) (int, int) {
	prim := fpPlain
	for i, s := range []string{"token", "fence", "sem", "rw", "rw", "multi", "elect"} {
		if strings.Contains(name, s) {
			prim = i + 1
			break
		}
	}
	switch {
	case strings.Contains(name, "SENTINEL"):
		return fzSentinel, prim
	case strings.Contains(name, "ROLE"):
		return fzRole, prim
	case strings.Contains(name, "CLUSTER"):
		return fzCluster, prim
	case strings.Contains(name, "MOVED"), strings.HasPrefix(name, "cluster "):
		return fzShard, prim
	case strings.Contains(name, "PING"):
		return fzHandshake, prim
	}
	return fzAcquire, prim
}

func writeSeed(t *testing.T, target, name string, b []byte) {
	dir := filepath.Join("testdata", "fuzz", target)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	text := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
}

// rawReply sends one command on a connection of its own and returns the
// reply's bytes.
func rawReply(t *testing.T, addr string, args ...string) []byte {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = c.Write(AppendCommand(nil, args...))
	require.NoError(t, err)
	var buf []byte
	p := make([]byte, 64<<10)
	for {
		_, n, err := parseReply(buf)
		require.NoError(t, err)
		if n > 0 {
			return buf[:n]
		}
		k, err := c.Read(p)
		require.NoError(t, err)
		buf = append(buf, p[:k]...)
	}
}

// scriptNames names the engine's scripts by sum and by source.
func scriptNames() map[string]string {
	m := map[string]string{}
	for name, sc := range map[string]*script{"release": releaseScript, "extend": extendScript, "acquire-token": acquireTokenScript,
		"acquire-fence": acquireFenceScript, "fence": fenceScript, "inspect": inspectScript, "sem-acquire": semAcquireScript,
		"sem-release": semReleaseScript, "sem-inspect": semInspectScript, "rw-acquire": rwAcquireScript, "rw-extend": rwExtendScript,
		"rw-release": rwReleaseScript, "rw-fence": rwFenceScript, "rw-inspect": rwInspectScript, "multi-acquire": multiAcquireScript,
		"multi-release": multiReleaseScript, "multi-extend": multiExtendScript, "multi-fence": multiFenceScript,
		"elect-fence": electFenceScript, "elect-extend": electExtendScript, "elect-release": electReleaseScript,
		"release-shard": releaseShardScript, "multi-release-shard": multiReleaseShardScript, "rw-release-shard": rwReleaseShardScript,
		"sem-release-shard": semReleaseShardScript, "elect-release-shard": electReleaseShardScript, "elect-fence-shard": electFenceShardScript} {
		m[sc.sha], m[sc.src] = name, name
	}
	return m
}

type capEvent struct {
	c    ConnID
	data []byte
	err  error
}

// captureRun acquires and releases every primitive through an engine
// driven over real sockets, recording the first reply to each kind of
// command under prefix + its name.
func captureRun(t *testing.T, nodes []Node, rec map[string][]byte, prefix string, waitReplicas *int) {
	e, err := New(Config{Nodes: nodes, NodeTimeout: 2 * time.Second, WaitReplicas: waitReplicas}, SystemEnv())
	require.NoError(t, err)
	scripts := scriptNames()
	conns := map[ConnID]net.Conn{}
	pending := map[ConnID][]string{} // names of the commands written, in order
	bufs := map[ConnID][]byte{}
	events := make(chan capEvent, 64)
	done := map[OpID]Action{}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	step := func() {
		for {
			a, ok := e.Next()
			if !ok {
				return
			}
			switch a.Kind {
			case ActOpen:
				c, err := net.Dial("tcp", a.Dial.Addr)
				if err != nil {
					e.ConnFailed(a.Conn, err)
					continue
				}
				conns[a.Conn] = c
				go func(id ConnID) {
					p := make([]byte, 64<<10)
					for {
						n, err := c.Read(p)
						events <- capEvent{c: id, data: append([]byte(nil), p[:n]...), err: err}
						if err != nil {
							return
						}
					}
				}(a.Conn)
				e.Opened(a.Conn)
			case ActWrite:
				for rest := a.Data; len(rest) > 0; {
					r, n, err := parseReply(rest)
					require.NoError(t, err)
					rest = rest[n:]
					name := strings.ToUpper(r.Elems[0].Str)
					switch name {
					case "EVAL", "EVALSHA":
						name = "EVAL " + scripts[r.Elems[1].Str]
					case "CLUSTER", "SENTINEL", "CLIENT":
						name += " " + strings.ToUpper(r.Elems[1].Str)
					}
					pending[a.Conn] = append(pending[a.Conn], name)
				}
				_, err := conns[a.Conn].Write(a.Data)
				require.NoError(t, err)
			case ActClose:
				if c := conns[a.Conn]; c != nil {
					c.Close()
					delete(conns, a.Conn)
				}
			case ActDone:
				done[a.Op] = a
			}
		}
	}
	wait := func(op OpID) Action {
		deadline := time.After(30 * time.Second)
		for {
			step()
			if d, ok := done[op]; ok {
				return d
			}
			select {
			case ev := <-events:
				if conns[ev.c] == nil {
					continue
				}
				if ev.err != nil {
					e.ConnFailed(ev.c, ev.err)
					continue
				}
				bufs[ev.c] = append(bufs[ev.c], ev.data...)
				for {
					_, n, err := parseReply(bufs[ev.c])
					if err != nil || n == 0 {
						break
					}
					if q := pending[ev.c]; len(q) > 0 {
						// The first two different replies to each kind.
						key, got := prefix+q[0], bufs[ev.c][:n]
						switch {
						case rec[key] == nil:
							rec[key] = append([]byte(nil), got...)
						case rec[key+" 2"] == nil && string(rec[key]) != string(got):
							rec[key+" 2"] = append([]byte(nil), got...)
						}
						pending[ev.c] = q[1:]
					}
					bufs[ev.c] = bufs[ev.c][n:]
				}
				e.Received(ev.c, ev.data)
			case <-time.After(10 * time.Millisecond):
				e.Tick()
			case <-deadline:
				t.Fatalf("operation %d did not end", op)
			}
		}
	}
	for _, req := range []AcquireRequest{
		{Resource: "cap{x}", TTL: 10 * time.Second},
		{Resource: "cap{x}", TTL: 10 * time.Second, Token: "0123456789abcdef-token"},
		{Resource: "cap{x}", TTL: 10 * time.Second, Fence: true},
		{Resource: "sem{x}", TTL: 10 * time.Second, Permits: 2},
		{Resource: "rw{x}", TTL: 10 * time.Second, Mode: ModeRead},
		{Resource: "rw{x}", TTL: 10 * time.Second, Mode: ModeWrite, Fence: true},
		{Resource: "cap{x}", TTL: 10 * time.Second, Resources: []string{"cap2{x}"}, Fence: true},
		{Resource: "elect{x}", TTL: 10 * time.Second, Election: true, Value: "me"},
	} {
		op, err := e.Acquire(req)
		require.NoError(t, err)
		d := wait(op)
		require.NoError(t, d.Err, "%+v", req)
		// A second acquire of a held one: the refusals' shapes.
		if req.Mode != ModeRead && req.Permits == 0 && !req.Election {
			op, err = e.Acquire(AcquireRequest{Resource: req.Resource, TTL: time.Second, Fence: req.Fence, Mode: req.Mode, Resources: req.Resources})
			require.NoError(t, err)
			wait(op)
		}
		if req.Election {
			continue // a campaign ends with the engine (Close)
		}
		op, err = e.Extend(d.Lock, 20*time.Second)
		require.NoError(t, err)
		wait(op)
		op, err = e.Release(d.Lock)
		require.NoError(t, err)
		require.NoError(t, wait(op).Err)
	}
	e.Close()
	for deadline := time.Now().Add(30 * time.Second); !e.Closed(); {
		require.True(t, time.Now().Before(deadline), "the engine did not close")
		step()
		select {
		case ev := <-events:
			if conns[ev.c] != nil && ev.err == nil {
				e.Received(ev.c, ev.data)
			} else if conns[ev.c] != nil {
				e.ConnFailed(ev.c, ev.err)
			}
		case <-time.After(10 * time.Millisecond):
			e.Tick()
		}
	}
	step()
}
