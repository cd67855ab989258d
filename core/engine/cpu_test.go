package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokenIsUUID holds newToken to google/uuid's version-4 UUIDs, made
// from the same random bytes, and the release ids to 16 hex digits; the
// strings the arena makes must stay what they were made as.
func TestTokenIsUUID(t *testing.T) {
	for _, owner := range []string{"", "worker-7"} {
		env := &fakeEnv{b: 200}
		e, err := New(Config{Nodes: oneNode, Owner: owner}, env)
		require.NoError(t, err)
		var tokens, ids []string
		for range 100 { // several of the arena's arrays
			next := &fakeEnv{b: env.b}
			want, err := uuid.NewRandomFromReader(envReader{next})
			require.NoError(t, err)
			var u [16]byte
			(&fakeEnv{b: env.b}).Random(u[:])
			setV4(&u) // liblock.wasm's tokenUUID
			assert.Equal(t, [16]byte(want), u)
			tok := e.newToken()
			if owner != "" {
				assert.Equal(t, owner+"/"+want.String(), tok)
			} else {
				assert.Equal(t, want.String(), tok)
			}
			tokens = append(tokens, tok)
			id := e.releaseID("k")
			assert.Regexp(t, "^[0-9a-f]{16}$", id)
			ids = append(ids, id)
		}
		// Made again from the same source, all are as they were.
		env2 := &fakeEnv{b: 200}
		e2, err := New(Config{Nodes: oneNode, Owner: owner}, env2)
		require.NoError(t, err)
		for i := range tokens {
			assert.Equal(t, tokens[i], e2.newToken())
			assert.Equal(t, ids[i], e2.releaseID("k"))
		}
	}
}

func TestStrArena(t *testing.T) {
	var a strArena
	seen := map[*byte]bool{}
	for _, n := range []int{1, 36, 100, arenaChunk / 4, arenaChunk/4 + 1, arenaChunk, 16, 16} {
		b := a.alloc(n)
		require.Len(t, b, n)
		require.Equal(t, n, cap(b), "a string's bytes must not be extendable into the next one's")
		for i := range b {
			require.False(t, seen[&b[i]], "byte handed out twice")
			seen[&b[i]] = true
		}
	}
}

func TestFifo(t *testing.T) {
	var f fifo
	reqs := make([]*request, 50)
	for i := range reqs {
		reqs[i] = &request{gen: uint64(i)}
	}
	var want []*request
	next := 0
	// Pushes and pops in uneven runs, through the compaction and the
	// growth of the array.
	for round := range 40 {
		for range round%7 + 1 {
			r := reqs[next%len(reqs)]
			next++
			f.push(r)
			want = append(want, r)
		}
		for range round%5 + 1 {
			if len(want) == 0 {
				break
			}
			require.Same(t, want[0], f.pop())
			want = want[1:]
		}
		require.Equal(t, len(want), f.len())
		require.Equal(t, want, append([]*request{}, f.items()...))
		for _, x := range f.q[:f.head] {
			require.Nil(t, x, "a popped request must not stay referenced")
		}
	}
	f.reset()
	require.Zero(t, f.len())
}

// TestPairAllocs bounds the allocations of an acquire+release pair with
// instantly answered I/O (BenchmarkEngineCPU's), which in liblock.wasm cost
// far more than natively; with Config.Report too (reports allocate
// nothing: they are Action values).
func TestPairAllocs(t *testing.T) {
	for _, report := range []bool{false, true} {
		testPairAllocs(t, report)
	}
}

func testPairAllocs(t *testing.T, report bool) {
	for _, n := range []int{1, 5} {
		nodes := make([]Node, n)
		for i := range nodes {
			nodes[i] = Node{Network: "tcp", Addr: "h:" + string(rune('1'+i))}
		}
		env := &fakeEnv{}
		e, err := New(Config{Nodes: nodes, NodeTimeout: time.Second, Report: report}, env)
		require.NoError(t, err)
		h := &instantHost{e: e}
		pair := func() { // checked without testify, whose arguments would allocate
			env.now += time.Microsecond
			if _, err := e.Acquire(AcquireRequest{Resource: "r", TTL: 10 * time.Second}); err != nil {
				t.Fatal(err)
			}
			if lock, err := h.run(t); err != nil || lock == 0 {
				t.Fatal("acquire:", err)
			} else if _, err := e.Release(lock); err != nil {
				t.Fatal(err)
			}
			if _, err := h.run(t); err != nil {
				t.Fatal("release:", err)
			}
		}
		for range 100 { // connections open, buffers grown
			pair()
		}
		allocs := testing.AllocsPerRun(1000, pair)
		assert.LessOrEqual(t, allocs, float64(pairAllocs), "%d nodes, report %v", n, report)
	}
}

// pairAllocs: the acquire, with its attempt, the lock and the lock's
// release in its memory, and natively google/uuid's UUID (it reads into an
// array through an io.Reader, so the array escapes); the arena's share of a
// token and a release id is a tenth. (liblock.wasm formats its own UUID:
// one.)
const pairAllocs = 2

// fakeTarget is a timer target that goes stale for good when told.
type fakeTarget struct {
	id    int
	stale bool
}

func (f *fakeTarget) fire(*Engine, uint64) {}
func (f *fakeTarget) live(uint64) bool     { return !f.stale }

// TestTimerPrune: stale timers do not pile up, and the live ones come out
// in deadline order, first come first among equal deadlines, as without
// pruning.
func TestTimerPrune(t *testing.T) {
	var h timerHeap
	type pushed struct {
		at     time.Duration
		target *fakeTarget
	}
	var all []pushed
	for i := range 5000 {
		f := &fakeTarget{id: i}
		at := time.Duration((i * 7919) % 300) // many equal deadlines
		h.push(at, f, 0)
		all = append(all, pushed{at, f})
		if i%10 != 0 {
			f.stale = true // most go stale at once, as answered requests do
		}
		require.LessOrEqual(t, len(h.h), 2*(i/10+1)+minPrune)
	}
	var want []int
	for at := range time.Duration(300) {
		for _, p := range all {
			if p.at == at && !p.target.stale {
				want = append(want, p.target.id)
			}
		}
	}
	var got []int
	for {
		tm, ok := h.popDue(1 << 40)
		if !ok {
			break
		}
		got = append(got, tm.target.(*fakeTarget).id)
	}
	require.Equal(t, want, got)
}

func TestAppendLen(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 42, 99, 100, 101, 999, 1000, 65536, 1 << 40} {
		assert.Equal(t, strconv.Itoa(n), string(appendLen([]byte{}, n)))
		assert.Equal(t, "x"+strconv.Itoa(n), string(appendLen([]byte("x"), n)))
	}
}

// TestReceivedInPieces: replies parsed where they arrive, or from what was
// left over: one byte at a time, or a reply and the start of the next in
// one input, the engine reads the same replies.
func TestReceivedInPieces(t *testing.T) {
	for _, cut := range []int{1, 2, 3, 5, 100} {
		env := &fakeEnv{}
		e, err := New(Config{Nodes: oneNode, NodeTimeout: time.Second}, env)
		require.NoError(t, err)
		var conn ConnID
		var done []Action
		drain := func() {
			for a, ok := e.Next(); ok; a, ok = e.Next() {
				switch a.Kind {
				case ActOpen:
					conn = a.Conn
				case ActDone:
					done = append(done, a)
				}
			}
		}
		feed := func(b string) {
			for len(b) > 0 {
				n := min(cut, len(b))
				e.Received(conn, []byte(b[:n]))
				drain()
				b = b[n:]
			}
		}
		// Two acquires of different keys pipelined behind the handshake.
		_, err = e.Acquire(AcquireRequest{Resource: "a", TTL: 10 * time.Second})
		require.NoError(t, err)
		_, err = e.Acquire(AcquireRequest{Resource: "b", TTL: 10 * time.Second})
		require.NoError(t, err)
		drain()
		require.NotZero(t, conn)
		e.Opened(conn)
		drain()
		feed("+PONG\r\n+OK\r\n$-1\r\n") // PONG, a's SET granted, b's refused
		require.Len(t, done, 2, "cut %d", cut)
		assert.NoError(t, done[0].Err)
		assert.NotZero(t, done[0].Lock)
		assert.ErrorIs(t, done[1].Err, ErrNotAcquired)
		done = nil
		_, err = e.Release(onlyLock(t, e, cut))
		require.NoError(t, err)
		drain()
		feed(":1\r\n") // b was refused: no cleanup of it is in flight

		require.Len(t, done, 1, "cut %d", cut)
		assert.NoError(t, done[0].Err)
	}
}

// onlyLock returns the one lock e holds.
func onlyLock(t *testing.T, e *Engine, cut int) LockID {
	require.Len(t, e.locks, 1, "cut %d", cut)
	for id := range e.locks {
		return id
	}
	return 0
}
