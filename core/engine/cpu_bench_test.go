package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeEnv is a clock the benchmark moves by hand and a fixed random source.
type fakeEnv struct {
	now time.Duration
	b   byte
}

func (f *fakeEnv) Now() time.Duration { return f.now }
func (f *fakeEnv) Random(p []byte) {
	for i := range p {
		f.b++
		p[i] = f.b
	}
}

// instantHost plays every node as one that answers at once, as Redis does
// for a key nobody else holds: the handshake's PING, SET → OK, a script → 1.
type instantHost struct {
	e     *Engine
	conns map[ConnID]bool
	reply []byte
}

func (h *instantHost) run(t testing.TB) (lock LockID, err error) {
	for {
		a, ok := h.e.Next()
		if !ok {
			return lock, err
		}
		switch a.Kind {
		case ActOpen:
			h.e.Opened(a.Conn)
		case ActWrite:
			h.reply = h.reply[:0]
			for rest := a.Data; len(rest) > 0; {
				n, isSet := commandLen(rest)
				switch {
				case n == 0:
					t.Fatalf("cannot read %q", rest)
				case isSet == 'S':
					h.reply = append(h.reply, "+OK\r\n"...)
				case isSet == 'P':
					h.reply = append(h.reply, "+PONG\r\n"...)
				default:
					h.reply = append(h.reply, ":1\r\n"...)
				}
				rest = rest[n:]
			}
			h.e.Received(a.Conn, h.reply)
		case ActDone:
			lock, err = a.Lock, a.Err
		}
	}
}

// commandLen returns the length of the RESP command at the front of b and
// the first letter of its name; 0 when b does not start with a whole
// command. It reads every header line, and skips each argument by its
// length (parseInt reads the numbers, as a host's parser would, without
// converting them to strings first).
func commandLen(b []byte) (int, byte) {
	line, n, _ := replyLine(b)
	if n == 0 || line[0] != '*' {
		return 0, 0
	}
	count, err := parseInt(line[1:])
	if err != nil {
		return 0, 0
	}
	off, first := n, byte(0)
	for i := range count {
		l, k, _ := replyLine(b[off:])
		if k == 0 || l[0] != '$' {
			return 0, 0
		}
		size, err := parseInt(l[1:])
		if err != nil || size < 0 || off+k+int(size)+2 > len(b) {
			return 0, 0
		}
		if i == 0 {
			first = b[off+k]
		}
		off += k + int(size) + 2
	}
	return off, first
}

// BenchmarkEngineCPU reports the engine's CPU per acquire+release pair with
// instantly answered I/O, on 1 and 5 nodes: the native counterpart of
// wasm/host's BenchmarkModuleCPU (the same engine compiled for wasip1 and
// run by wazero). The wait=10s rows acquire with a wait budget that goes
// unused, which must cost what a single attempt costs.
func BenchmarkEngineCPU(b *testing.B) {
	for _, bench := range []struct {
		n    int
		name string
		wait time.Duration
	}{{1, "nodes=1", 0}, {1, "nodes=1,wait=10s", 10 * time.Second}, {5, "nodes=5", 0}, {5, "nodes=5,wait=10s", 10 * time.Second}} {
		n := bench.n
		b.Run(bench.name, func(b *testing.B) {
			nodes := make([]Node, n)
			for i := range nodes {
				nodes[i] = Node{Network: "tcp", Addr: "127.0.0.1:" + strconv.Itoa(7001+i)}
			}
			env := &fakeEnv{}
			e, err := New(Config{Nodes: nodes, NodeTimeout: time.Second}, env)
			require.NoError(b, err)
			h := &instantHost{e: e}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N { // plain checks: testify's arguments would allocate in the measured loop
				env.now += time.Microsecond
				if _, err := e.Acquire(AcquireRequest{Resource: "bench", TTL: 10 * time.Second, Wait: bench.wait}); err != nil {
					b.Fatal(err)
				}
				lock, err := h.run(b)
				if err != nil || lock == 0 {
					b.Fatal(err)
				}
				if _, err := e.Release(lock); err != nil {
					b.Fatal(err)
				}
				if _, err := h.run(b); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
