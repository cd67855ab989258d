package engine

import (
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// respCommands splits the RESP arrays of one write into commands.
func respCommands(t *testing.T, data []byte) [][]string {
	t.Helper()
	var cmds [][]string
	s := string(data)
	line := func() string {
		i := strings.Index(s, "\r\n")
		require.GreaterOrEqual(t, i, 0, "unterminated line in %q", data)
		l := s[:i]
		s = s[i+2:]
		return l
	}
	for s != "" {
		head := line()
		require.True(t, strings.HasPrefix(head, "*"), "not an array: %q", head)
		n, err := strconv.Atoi(head[1:])
		require.NoError(t, err)
		cmd := make([]string, n)
		for i := range cmd {
			size, err := strconv.Atoi(strings.TrimPrefix(line(), "$"))
			require.NoError(t, err)
			cmd[i], s = s[:size], s[size+2:]
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// fakeNode answers the engine's commands for one node whose key is held by
// another client: every SET NX and acquire script is refused. It records
// the attempts it saw.
type fakeNode struct {
	t        *testing.T
	e        *Engine
	attempts int
	done     map[OpID]error
}

// pump carries out the engine's actions until none is left, answering
// every command at once.
func (f *fakeNode) pump() {
	for {
		a, ok := f.e.Next()
		if !ok {
			return
		}
		switch a.Kind {
		case ActOpen:
			f.e.Opened(a.Conn)
		case ActDone:
			f.done[a.Op] = a.Err
		case ActWrite:
			var reply strings.Builder
			for _, cmd := range respCommands(f.t, a.Data) {
				switch name := strings.ToUpper(cmd[0]); {
				case name == "PING":
					reply.WriteString("+PONG\r\n")
				case name == "SUBSCRIBE":
					ch := cmd[1]
					reply.WriteString("*3\r\n$9\r\nsubscribe\r\n$" + strconv.Itoa(len(ch)) + "\r\n" + ch + "\r\n:1\r\n")
				case name == "SET" || strings.HasPrefix(name, "EVAL"):
					f.attempts++
					reply.WriteString("$-1\r\n") // taken
				default:
					f.t.Fatalf("unexpected command %q", cmd)
				}
			}
			f.e.Received(a.Conn, []byte(reply.String()))
		}
	}
}

// TestNoBargingBehindOwnWaiters: a waiting acquire that arrives while older
// waiters of the same client queue for the resource makes no attempt of
// its own; it sleeps until a release wakes it in turn. Without this, the
// newest caller — typically the releaser itself, asking again in a loop —
// would win the key whenever it asks before the queued waiter's backoff
// ends, and the queue would starve.
func TestNoBargingBehindOwnWaiters(t *testing.T) {
	env := &manualEnv{r: mrand.New(mrand.NewPCG(3, 4))}
	e, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "a:1"}}, NodeTimeout: 50 * time.Millisecond}, env)
	require.NoError(t, err)
	f := &fakeNode{t: t, e: e, done: map[OpID]error{}}

	first, err := e.Acquire(AcquireRequest{Resource: "r", TTL: time.Second, Wait: 10 * time.Second})
	require.NoError(t, err)
	f.pump()
	require.Equal(t, 1, f.attempts, "the first waiter tries once at once")
	require.NotContains(t, f.done, first)

	for i := range 5 {
		env.now += time.Millisecond
		e.Tick()
		f.pump()
		before := f.attempts
		late, err := e.Acquire(AcquireRequest{Resource: "r", TTL: time.Second, Wait: 10 * time.Second})
		require.NoError(t, err)
		f.pump()
		assert.Equal(t, before, f.attempts, "waiter %d behind a queued one made an attempt of its own", i+2)
		assert.NotContains(t, f.done, late)
	}

	// A single attempt (no wait) is not a waiter: it still tries at once.
	before := f.attempts
	single, err := e.Acquire(AcquireRequest{Resource: "r", TTL: time.Second})
	require.NoError(t, err)
	f.pump()
	assert.Equal(t, before+1, f.attempts, "a single attempt must try at once")
	assert.ErrorIs(t, f.done[single], ErrNotAcquired)

	// The queue still polls through its oldest waiter.
	before = f.attempts
	for range 200 {
		env.now += time.Millisecond
		e.Tick()
		f.pump()
	}
	assert.Greater(t, f.attempts, before, "nobody polls for the queued waiters")
}
