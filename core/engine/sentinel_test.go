package engine

import (
	"errors"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// A scripted fake of a Sentinel deployment: the simulation models
// standalone nodes only, so these tests drive the engine by hand, with
// servers that answer each command as the test says, and log every command
// each address receives.

type fakeServer struct {
	down   bool     // connections are refused
	frozen bool     // connections open, nothing is ever answered
	master []string // a sentinel: what get-master-addr-by-name answers (nil: no such master)
	role   string   // a data node: "master" or "slave"
	acks   int      // a data node: WAIT's answer
	errs   map[string]string
	seq    [][]string // a sentinel: answers before master, one per question
	setNil bool       // a data node: SET NX refuses
	eval   string     // a data node: a script's answer (":1" when empty)
	info   string     // a data node: INFO's answer (an error when empty)
}

type fakeDeployment struct {
	t       *testing.T
	e       *Engine
	env     *manualEnv
	servers map[string]*fakeServer
	conns   map[ConnID]string
	log     []string // "addr CMD args..."
	done    map[OpID]Action
}

func newFake(t *testing.T, url string, wait *int, servers map[string]*fakeServer) *fakeDeployment {
	return newFakeNodes(t, []string{url}, wait, servers)
}

func newFakeNodes(t *testing.T, urls []string, wait *int, servers map[string]*fakeServer) *fakeDeployment {
	nodes, err := ParseNodes(urls)
	require.NoError(t, err)
	env := &manualEnv{r: mrand.New(mrand.NewPCG(1, 2))}
	e, err := New(Config{Nodes: nodes, NodeTimeout: 100 * time.Millisecond, WaitReplicas: wait}, env)
	require.NoError(t, err)
	return &fakeDeployment{t: t, e: e, env: env, servers: servers, conns: map[ConnID]string{}, done: map[OpID]Action{}}
}

// run carries out the engine's actions until there are none.
func (f *fakeDeployment) run() {
	for i := 0; i < 10000; i++ {
		a, ok := f.e.Next()
		if !ok {
			return
		}
		switch a.Kind {
		case ActOpen:
			s := f.servers[a.Dial.Addr]
			if s == nil || s.down {
				f.log = append(f.log, a.Dial.Addr+" (refused)")
				f.e.ConnFailed(a.Conn, errors.New("connection refused"))
				continue
			}
			f.conns[a.Conn] = a.Dial.Addr
			f.e.Opened(a.Conn)
		case ActWrite:
			addr := f.conns[a.Conn]
			s := f.servers[addr]
			var out []byte
			for _, cmd := range parseCommands(f.t, a.Data) {
				f.log = append(f.log, addr+" "+strings.Join(cmd, " "))
				if !s.frozen {
					out = append(out, s.answer(cmd)...)
				}
			}
			if len(out) > 0 {
				f.e.Received(a.Conn, out)
			}
		case ActClose:
			delete(f.conns, a.Conn)
		case ActDone:
			f.done[a.Op] = a
		}
	}
	f.t.Fatal("the engine never stopped acting")
}

func (s *fakeServer) answer(cmd []string) []byte {
	name := strings.ToUpper(cmd[0])
	if m, ok := s.errs[name]; ok {
		return []byte("-" + m + "\r\n")
	}
	switch name {
	case "AUTH", "SELECT", "CLIENT":
		return []byte("+OK\r\n")
	case "PING":
		return []byte("+PONG\r\n")
	case "SENTINEL":
		if len(s.seq) > 0 {
			m := s.seq[0]
			s.seq = s.seq[1:]
			return []byte("*2\r\n$" + strconv.Itoa(len(m[0])) + "\r\n" + m[0] + "\r\n$" + strconv.Itoa(len(m[1])) + "\r\n" + m[1] + "\r\n")
		}
		if s.master == nil {
			return []byte("*-1\r\n")
		}
		return []byte("*2\r\n$" + strconv.Itoa(len(s.master[0])) + "\r\n" + s.master[0] + "\r\n$" + strconv.Itoa(len(s.master[1])) + "\r\n" + s.master[1] + "\r\n")
	case "ROLE":
		return []byte("*1\r\n$" + strconv.Itoa(len(s.role)) + "\r\n" + s.role + "\r\n")
	case "SET":
		if s.setNil {
			return []byte("$-1\r\n")
		}
		return []byte("+OK\r\n")
	case "WAIT":
		return []byte(":" + strconv.Itoa(s.acks) + "\r\n")
	case "INFO":
		if s.info == "" {
			break
		}
		return []byte("$" + strconv.Itoa(len(s.info)) + "\r\n" + s.info + "\r\n")
	case "EVAL", "EVALSHA":
		if s.eval != "" {
			return []byte(s.eval + "\r\n")
		}
		return []byte(":1\r\n")
	}
	return []byte("-ERR unknown command\r\n")
}

func parseCommands(t *testing.T, b []byte) [][]string {
	var cmds [][]string
	s := string(b)
	for s != "" {
		require.Equal(t, byte('*'), s[0], "not a command: %q", s)
		line, rest, _ := strings.Cut(s[1:], "\r\n")
		n, err := strconv.Atoi(line)
		require.NoError(t, err)
		var cmd []string
		for i := 0; i < n; i++ {
			line, rest, _ = strings.Cut(rest[1:], "\r\n")
			size, err := strconv.Atoi(line)
			require.NoError(t, err)
			cmd = append(cmd, rest[:size])
			rest = rest[size+2:]
		}
		cmds = append(cmds, cmd)
		s = rest
	}
	return cmds
}

func (f *fakeDeployment) acquire(resource string) Action {
	f.t.Helper()
	op, err := f.e.Acquire(AcquireRequest{Resource: resource, TTL: 10 * time.Second})
	require.NoError(f.t, err)
	f.run()
	d, ok := f.done[op]
	require.True(f.t, ok, "the acquire did not end; log:\n%s", strings.Join(f.log, "\n"))
	return d
}

// sent returns the commands logged for addr whose name is cmd.
func (f *fakeDeployment) sent(addr, cmd string) []string {
	var out []string
	for _, l := range f.log {
		if strings.HasPrefix(l, addr+" "+cmd) {
			out = append(out, l)
		}
	}
	return out
}

const sentinelURL = "redis://suser:spw@s1:26379?master_name=mymaster&addr=s2:26379&addr=s3:26379&username=duser&password=dpw"

func TestSentinelResolvesThePrimary(t *testing.T) {
	f := newFake(t, sentinelURL, nil, map[string]*fakeServer{
		"s1:26379":      {down: true},
		"s2:26379":      {master: []string{"10.0.0.1", "6379"}},
		"p:6379":        {},
		"10.0.0.1:6379": {role: "master", acks: 1},
	})
	d := f.acquire("r")
	require.NoError(t, d.Err)
	assert.Equal(t, []string{
		"s1:26379 (refused)",
		"s2:26379 AUTH suser spw",
		"s2:26379 SENTINEL get-master-addr-by-name mymaster",
		"10.0.0.1:6379 AUTH duser dpw",
		"10.0.0.1:6379 ROLE",
	}, f.log[:5], "sentinel credentials to the sentinel, data credentials to the primary, ROLE before anything")
	require.Len(t, f.sent("10.0.0.1:6379", "SET"), 1)
	assert.Equal(t, []string{"10.0.0.1:6379 WAIT 1 50"}, f.sent("10.0.0.1:6379", "WAIT"), "WAIT 1 by default on a Sentinel node, half the node timeout")
	assert.Equal(t, "master_name=mymaster via s1:26379", f.e.NodeAddr(0))
}

func TestSentinelNeverWritesToAReplica(t *testing.T) {
	// s1 names a replica first (its view lags a failover): ROLE says so,
	// the engine asks again, and s1 names the primary this time.
	f := newFake(t, "redis://s1:1?master_name=m&addr=s2:2", nil, map[string]*fakeServer{
		"s1:1": {seq: [][]string{{"r", "1"}}, master: []string{"p", "1"}},
		"r:1":  {role: "slave", acks: 1},
		"p:1":  {role: "master", acks: 1},
	})
	require.NoError(t, f.acquire("r").Err)
	assert.Equal(t, []string{"r:1 ROLE", "r:1 INFO"}, onlyAddr(f.log, "r:1"), "nothing but the handshake's reads reaches the replica")
	assert.Len(t, f.sent("p:1", "SET"), 1)
	assert.Len(t, f.sent("s1:1", "SENTINEL"), 2)
}

func onlyAddr(log []string, addr string) []string {
	var out []string
	for _, l := range log {
		if strings.HasPrefix(l, addr+" ") {
			out = append(out, l)
		}
	}
	return out
}

func TestSentinelAlwaysAReplicaFails(t *testing.T) {
	f := newFake(t, "redis://s1:1?master_name=m&addr=s2:2", nil, map[string]*fakeServer{
		"s1:1": {master: []string{"r", "1"}},
		"s2:2": {master: []string{"r", "1"}},
		"r:1":  {role: "slave", acks: 1},
	})
	d := f.acquire("r")
	require.Error(t, d.Err)
	assert.Contains(t, d.Err.Error(), "whose ROLE is slave, not master")
	assert.Empty(t, f.sent("r:1", "SET"))
	assert.Empty(t, f.sent("r:1", "EVAL"))
}

func TestSentinelNoneKnowsTheMaster(t *testing.T) {
	f := newFake(t, "redis://s1:1?master_name=m&addr=s2:2&addr=s3:3", nil, map[string]*fakeServer{
		"s1:1": {},
		"s2:2": {errs: map[string]string{"SENTINEL": "ERR boom"}},
	})
	d := f.acquire("r")
	require.Error(t, d.Err)
	msg := d.Err.Error()
	assert.Contains(t, msg, `no sentinel named the primary of "m"`)
	assert.Contains(t, msg, `s1:1: knows no master named "m"`)
	assert.Contains(t, msg, "s2:2: ERR boom")
	assert.Contains(t, msg, "s3:3: connection refused")
}

func TestSentinelFrozenWithinTheNodeTimeout(t *testing.T) {
	f := newFake(t, "redis://s1:1?master_name=m", nil, map[string]*fakeServer{"s1:1": {frozen: true}})
	op, err := f.e.Acquire(AcquireRequest{Resource: "r", TTL: time.Second})
	require.NoError(t, err)
	f.run()
	require.Empty(t, f.done)
	f.env.now += f.e.NodeTimeout()
	f.e.Tick()
	f.run()
	require.Contains(t, f.done, op)
	assert.Contains(t, f.done[op].Err.Error(), "connect: no answer within the node timeout")
	// The failed attempt's cleanup tries the node once more, bounded
	// by a node timeout of its own.
	f.env.now += f.e.NodeTimeout()
	f.e.Tick()
	f.run()
	assert.Empty(t, f.conns, "every connection closed")
}

func TestSentinelReadonlyResolvesAgain(t *testing.T) {
	for _, reply := range []string{
		"READONLY You can't write against a read only replica.",
		"LOADING Redis is loading the dataset in memory",
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
	} {
		code, _, _ := strings.Cut(reply, " ")
		t.Run(code, func(t *testing.T) {
			p := &fakeServer{role: "master", acks: 1}
			s1 := &fakeServer{master: []string{"p", "1"}}
			f := newFake(t, "redis://s1:1?master_name=m", nil, map[string]*fakeServer{
				"s1:1": s1, "p:1": p, "q:1": {role: "master", acks: 1},
			})
			require.NoError(t, f.acquire("a").Err)
			// A failover: p answers writes with the error now, and the
			// sentinels name q.
			p.errs = map[string]string{"SET": reply}
			s1.master = []string{"q", "1"}
			d := f.acquire("b")
			require.Error(t, d.Err)
			assert.Contains(t, d.Err.Error(), code)
			assert.Empty(t, f.sent("q:1", "SET"), "the failed attempt's cleanup only")
			require.NoError(t, f.acquire("c").Err, "the next request asks the sentinels again")
			assert.Len(t, f.sent("q:1", "SET"), 1)
			assert.Len(t, f.sent("s1:1", "SENTINEL"), 2)
		})
	}
}

// A primary demoted under a live connection with replica-read-only no
// would take the SET; its WAIT fails ("WAIT cannot be used with replica
// instances"), and so does the grant.
func TestWaitErrorFailsTheGrant(t *testing.T) {
	f := newFake(t, "redis://s1:1?master_name=m", nil, map[string]*fakeServer{
		"s1:1": {master: []string{"p", "1"}},
		"p:1":  {role: "master", errs: map[string]string{"WAIT": "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."}},
	})
	d := f.acquire("r")
	require.Error(t, d.Err)
	assert.ErrorIs(t, d.Err, ErrUnavailable)
	assert.Contains(t, d.Err.Error(), "WAIT 1: ERR WAIT cannot be used with replica instances")
	assert.Len(t, append(f.sent("p:1", "EVAL "), f.sent("p:1", "EVALSHA")...), 1, "the grant's key is deleted")
}

func TestWaitTooFewReplicasFailsAndCleansUp(t *testing.T) {
	two := 2
	f := newFake(t, "redis://p:1", &two, map[string]*fakeServer{"p:1": {role: "master", acks: 1}})
	d := f.acquire("r")
	require.Error(t, d.Err)
	assert.Contains(t, d.Err.Error(), "WAIT: 1 of the 2 replicas wait_replicas asks for acknowledged the grant within 50ms")
	var we *WaitError
	assert.True(t, errors.As(d.Err, &we), "%v", d.Err)
	require.Len(t, f.sent("p:1", "SET"), 1)
	evals := append(f.sent("p:1", "EVAL "), f.sent("p:1", "EVALSHA")...)
	require.Len(t, evals, 1, "the grant's key is deleted (the release script)")
}

func TestWaitEnoughReplicasAndExtend(t *testing.T) {
	one := 1
	f := newFake(t, "redis://p:1", &one, map[string]*fakeServer{"p:1": {role: "master", acks: 1}})
	d := f.acquire("r")
	require.NoError(t, d.Err)
	op, err := f.e.Extend(d.Lock, time.Second)
	require.NoError(t, err)
	f.run()
	require.NoError(t, f.done[op].Err)
	assert.Len(t, f.sent("p:1", "WAIT 1 50"), 2, "the grant and the extension")
	op, err = f.e.Release(d.Lock)
	require.NoError(t, err)
	f.run()
	require.NoError(t, f.done[op].Err)
	assert.Len(t, f.sent("p:1", "WAIT"), 3, "the release's deletion is waited for too")
}

// A primary left behind by a failover still answers as one (ROLE master)
// and takes the release's deletion, but its replicas follow the promoted
// one: the deletion's WAIT fails, and so does the release, whose next call
// asks the sentinels again and deletes on the new primary. Its control:
// with WAIT off the release reports done on the old primary.
func TestSentinelReleaseOnALeftBehindPrimary(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run("wait off "+strconv.FormatBool(off), func(t *testing.T) {
			var wait *int
			if off {
				wait = new(int)
			}
			p := &fakeServer{role: "master", acks: 1}
			s1 := &fakeServer{master: []string{"p", "1"}}
			q := &fakeServer{role: "master", acks: 1}
			f := newFake(t, "redis://s1:1?master_name=m", wait, map[string]*fakeServer{"s1:1": s1, "p:1": p, "q:1": q})
			d := f.acquire("r")
			require.NoError(t, d.Err)
			// The failover: q promoted, p keeps answering with no replica.
			p.acks, s1.master = 0, []string{"q", "1"}
			op, err := f.e.Release(d.Lock)
			require.NoError(t, err)
			f.run()
			if off {
				require.NoError(t, f.done[op].Err, "the control: done on the old primary")
				assert.Empty(t, f.sent("q:1", "EVAL"))
				return
			}
			err = f.done[op].Err
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrUnavailable)
			assert.Contains(t, err.Error(), "WAIT: 0 of the 1 replicas wait_replicas asks for acknowledged the release")
			op, err = f.e.Release(d.Lock)
			require.NoError(t, err)
			f.run()
			require.NoError(t, f.done[op].Err, "the next release asks the sentinels again")
			assert.Len(t, f.sent("q:1", "EVAL"), 1, "deleted on the new primary")
		})
	}
}

// A release that failed after its deletion was written (WAIT too short),
// called again, finds the key gone: within the lock's validity that is its
// own deletion, reported done (not lost). The not-held answer is waited for
// too: from a primary no replica follows it fails.
func TestReleaseAgainAfterAnUnsureRelease(t *testing.T) {
	one := 1
	p := &fakeServer{role: "master", acks: 1}
	f := newFake(t, "redis://p:1", &one, map[string]*fakeServer{"p:1": p})
	d := f.acquire("r")
	require.NoError(t, d.Err)
	p.acks = 0
	op, _ := f.e.Release(d.Lock)
	f.run()
	require.ErrorIs(t, f.done[op].Err, ErrUnavailable)
	p.eval = ":0" // deleted by the release that failed
	op, _ = f.e.Release(d.Lock)
	f.run()
	require.ErrorIs(t, f.done[op].Err, ErrUnavailable, "not held, from a primary no replica follows: unknown")
	p.acks = 1
	op, _ = f.e.Release(d.Lock)
	f.run()
	require.NoError(t, f.done[op].Err, "its own deletion: released")

	// The control: a lock whose release never failed and that is found
	// gone was lost.
	p.eval = ""
	d = f.acquire("r2")
	require.NoError(t, d.Err)
	p.eval = ":0"
	op, _ = f.e.Release(d.Lock)
	f.run()
	require.ErrorIs(t, f.done[op].Err, ErrLost)
}

// The negative control of the replica check: off, a grant no replica has
// counts all the same (which is what makes the failover tests' control
// lose the key).
func TestWaitOffCountsUnreplicatedGrants(t *testing.T) {
	zero := 0
	f := newFake(t, "redis://s1:1?master_name=m", &zero, map[string]*fakeServer{
		"s1:1": {master: []string{"p", "1"}}, "p:1": {role: "master", acks: 0},
	})
	require.NoError(t, f.acquire("r").Err)
	assert.Empty(t, f.sent("p:1", "WAIT"))
}

func TestWaitRefusalIsNotAFailure(t *testing.T) {
	// SET NX answers nil (the key is another's) and WAIT 0: a refusal,
	// not an unavailable node.
	one := 1
	f := newFake(t, "redis://p:1", &one, map[string]*fakeServer{"p:1": {role: "master", acks: 0, setNil: true}})
	d := f.acquire("r")
	require.Error(t, d.Err)
	assert.ErrorIs(t, d.Err, ErrNotAcquired)
	assert.NotContains(t, d.Err.Error(), "WAIT")
}

func TestWaitReplicasValidation(t *testing.T) {
	for _, w := range []int{-1, MaxWaitReplicas + 1} {
		err := Config{Nodes: oneNode, WaitReplicas: &w}.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "wait_replicas: must be between 0 (off) and 100, got "+strconv.Itoa(w))
	}
}

func TestSentinelDuplicateNodes(t *testing.T) {
	_, err := ParseNodes([]string{"redis://s1:1?master_name=m"})
	require.NoError(t, err)
	nodes, err := ParseNodes([]string{"redis://s1:1?master_name=m", "redis://s1:1?master_name=m", "redis://s1:1"})
	require.NoError(t, err)
	err = Config{Nodes: nodes}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nodes[1]: the same server as nodes[0]")
	err = Config{Nodes: []Node{nodes[0], nodes[2]}}.Validate()
	assert.NoError(t, err, "a Sentinel node and a plain node on the sentinel's address are different nodes")
}

// TestEveryScriptClassified: every script of the engine is in one of the
// replica check's sets (wait.go), so that a new primitive's grant script
// is read as its author meant. Add yours there when this fails.
func TestEveryScriptClassified(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	decl := regexp.MustCompile(`(?m)^\s*(\w+Script)\s*=\s*&script\{`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			n++
			name := m[1]
			assert.Contains(t, classifiedScripts(), name, "%s (%s) is in none of wait.go's sets", name, f)
		}
	}
	assert.Equal(t, len(noWait)+len(deletes)+len(grantNonNegative)+len(grantPositive)+len(grantSlot), n, "scripts declared vs classified")
}

func classifiedScripts() []string {
	names := map[*script]string{}
	for name, sc := range map[string]*script{
		"releaseScript": releaseScript, "inspectScript": inspectScript, "multiReleaseScript": multiReleaseScript,
		"acquireFenceScript": acquireFenceScript, "multiAcquireScript": multiAcquireScript,
		"extendScript": extendScript, "acquireTokenScript": acquireTokenScript, "fenceScript": fenceScript,
		"multiExtendScript": multiExtendScript, "multiFenceScript": multiFenceScript,
		"semAcquireScript": semAcquireScript, "semReleaseScript": semReleaseScript, "semInspectScript": semInspectScript,
		"rwAcquireScript": rwAcquireScript, "rwExtendScript": rwExtendScript, "rwReleaseScript": rwReleaseScript,
		"rwFenceScript": rwFenceScript, "rwInspectScript": rwInspectScript,
		"electFenceScript": electFenceScript, "electExtendScript": electExtendScript, "electReleaseScript": electReleaseScript,
		// The cluster variants (spubsub.go).
		"releaseShardScript": releaseShardScript, "multiReleaseShardScript": multiReleaseShardScript,
		"rwReleaseShardScript": rwReleaseShardScript, "semReleaseShardScript": semReleaseShardScript,
		"electReleaseShardScript": electReleaseShardScript, "electFenceShardScript": electFenceShardScript,
	} {
		names[sc] = name
	}
	var out []string
	for _, set := range []map[*script]bool{noWait, deletes, grantNonNegative, grantPositive, grantSlot} {
		for sc := range set {
			out = append(out, names[sc])
		}
	}
	return out
}

// Every script has its own bit in node.loaded: two sharing one would make a
// node that ran one skip the other's EVAL fallback (NOSCRIPT forever).
func TestScriptBitsDistinct(t *testing.T) {
	seen := map[uint32]*script{}
	for _, set := range []map[*script]bool{noWait, deletes, grantNonNegative, grantPositive, grantSlot} {
		for sc := range set {
			require.NotZero(t, sc.bit, sc.sha)
			require.Equal(t, 1, bitsSet(sc.bit), "%s: one bit", sc.sha)
			if other, dup := seen[sc.bit]; dup {
				t.Errorf("scripts %s and %s share bit %#x", sc.sha, other.sha, sc.bit)
			}
			seen[sc.bit] = sc
		}
	}
}

func bitsSet(v uint32) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}
