package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaderScript: a command that writes its term and pid, then runs until a
// file "stop" appears.
const leaderScript = `echo "$LIBLOCK_TERM $LIBLOCK_VALUE $LIBLOCK_FENCE $LIBLOCK_ELECTION" > term.tmp && mv term.tmp term
echo $$ > pid.tmp && mv pid.tmp pid
while [ ! -e stop ]; do sleep 0.01; done
exit 3`

// assertOnlyCounters: nothing left on the nodes but fence counters.
func assertOnlyCounters(t *testing.T, c *redistest.Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		var left []string
		eventually(t, 5*time.Second, "no election key left", func() bool {
			keys, err := n.Keys()
			require.NoError(t, err)
			left = left[:0]
			for _, k := range keys {
				if k != "" && !strings.HasSuffix(k, engine.FenceKey("")) {
					left = append(left, k)
				}
			}
			return len(left) == 0
		})
	}
}

// observer runs `liblock elect --observe --json` and collects its lines.
type observerProc struct {
	mu    sync.Mutex
	lines []leaderLine
	done  chan struct{}
}

func startObserver(t *testing.T, nodes, name string) (*observerProc, func() result) {
	cmd, _, errb := command(nodes, "elect", "--observe", "--json", "--poll", "100ms", name)
	cmd.Stdout = nil
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	o := &observerProc{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l leaderLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				o.mu.Lock()
				o.lines = append(o.lines, l)
				o.mu.Unlock()
			}
		}
	}()
	stop := func() result {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-o.done
		_ = cmd.Wait()
		return result{code: cmd.ProcessState.ExitCode(), stderr: errb.String()}
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return o, stop
}

func (o *observerProc) snapshot() []leaderLine {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]leaderLine(nil), o.lines...)
}

func (o *observerProc) sawTerm(term int64) bool {
	for _, l := range o.snapshot() {
		if l.Term == term {
			return true
		}
	}
	return false
}

func readTerm(t *testing.T, dir string) []string {
	t.Helper()
	eventually(t, 20*time.Second, "the leader's command wrote its term", func() bool { return exists(filepath.Join(dir, "term")) })
	b, err := os.ReadFile(filepath.Join(dir, "term"))
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// TestElectFailover: two `liblock elect` processes; only the leader's
// command runs; the leader's liblock is killed (SIGKILL: its command dies
// with it), the standby takes over with a higher term; the standby's
// command exits 3 and liblock passes 3 on, resigning; the observer prints
// each change, in order.
func TestElectFailover(t *testing.T) {
	c := redistest.Start(t, 3)
	nodes := nodesOf(c)
	obs, stopObs := startObserver(t, nodes, "svc")
	// The observer's first line (no leader) before anyone campaigns.
	eventually(t, 20*time.Second, "the observer's first line", func() bool { return len(obs.snapshot()) > 0 })
	dirs := [2]string{t.TempDir(), t.TempDir()}
	var cmds [2]*struct {
		r    chan result
		kill func()
	}
	for i := range 2 {
		cmd, out, errb := command(nodes, "elect", "--ttl", "1s", "svc", "--value", "replica-"+strconv.Itoa(i), "--", "sh", "-c", leaderScript)
		cmd.Dir = dirs[i]
		require.NoError(t, cmd.Start())
		r := make(chan result, 1)
		go func() { r <- wait(t, cmd, out, errb) }()
		cmds[i] = &struct {
			r    chan result
			kill func()
		}{r, func() { _ = cmd.Process.Signal(syscall.SIGKILL) }}
	}
	var first int
	eventually(t, 20*time.Second, "one leads", func() bool {
		for i, d := range dirs {
			if exists(filepath.Join(d, "term")) {
				first = i
				return true
			}
		}
		return false
	})
	f := readTerm(t, dirs[first])
	require.Len(t, f, 4, "LIBLOCK_TERM, _VALUE, _FENCE, _ELECTION: %q", f)
	assert.Equal(t, "replica-"+strconv.Itoa(first), f[1])
	assert.Equal(t, f[0], f[2], "LIBLOCK_FENCE is the term")
	assert.Equal(t, "svc", f[3])
	term1, _ := strconv.ParseInt(f[0], 10, 64)
	second := 1 - first
	assert.False(t, exists(filepath.Join(dirs[second], "term")), "the standby's command runs too")
	eventually(t, 5*time.Second, "the observer prints the leader", func() bool { return obs.sawTerm(term1) })
	pid := readPID(t, filepath.Join(dirs[first], "pid"))

	cmds[first].kill()
	r := <-cmds[first].r
	assert.Equal(t, -1, r.code, "liblock killed by a signal (ExitCode -1)")
	eventually(t, 10*time.Second, "the dead leader's command died with it", func() bool { return !alive(pid) })
	s := readTerm(t, dirs[second])
	term2, _ := strconv.ParseInt(s[0], 10, 64)
	assert.Greater(t, term2, term1)
	eventually(t, 5*time.Second, "the observer prints the new leader", func() bool { return obs.sawTerm(term2) })

	require.NoError(t, os.WriteFile(filepath.Join(dirs[second], "stop"), nil, 0o644))
	r = <-cmds[second].r
	assert.Equal(t, 3, r.code, "the command's own code")
	eventually(t, 5*time.Second, "the observer prints no leader", func() bool {
		l := obs.snapshot()
		return len(l) > 0 && !l[len(l)-1].Leader
	})
	assert.Zero(t, stopObs().code, "the observer's exit on SIGTERM")
	lines := obs.snapshot()
	require.NotEmpty(t, lines)
	assert.False(t, lines[0].Leader, "first line: no leader yet: %v", lines)
	var last int64
	held := 0
	for _, l := range lines {
		assert.Equal(t, "svc", l.Name)
		if l.Leader {
			held++
			assert.Greater(t, l.Term, last, "in order: %v", lines)
			last = l.Term
		}
	}
	assert.Equal(t, 2, held, "each leader printed once: %v", lines)
	assertOnlyCounters(t, c)
}

// TestElectLossKillsCommand: a lost leadership ends the command (SIGTERM)
// and liblock exits 70.
func TestElectLossKillsCommand(t *testing.T) {
	c := redistest.Start(t, 3)
	dir := t.TempDir()
	cmd, out, errb := command(nodesOf(c), "elect", "--ttl", "600ms", "job", "--value", "v", "--", "sh", "-c",
		`trap 'touch termed; exit 0' TERM; echo $$ > pid.tmp && mv pid.tmp pid; while :; do sleep 0.01; done`)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	pid := readPID(t, filepath.Join(dir, "pid"))
	require.NoError(t, c.FlushAll())
	r := wait(t, cmd, out, errb)
	assert.Equal(t, exitLost, r.code)
	assert.True(t, exists(filepath.Join(dir, "termed")), "the command got no SIGTERM")
	eventually(t, 10*time.Second, "the command is gone", func() bool { return !alive(pid) })
	assertOnlyCounters(t, c)
}

// TestElectUsageAndWait: bad usage names the flag (64); --wait 0 while
// another leads is 65.
func TestElectUsageAndWait(t *testing.T) {
	c := redistest.Start(t, 1)
	nodes := nodesOf(c)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"elect", "svc", "--", "true"}, "--value: missing"},
		{[]string{"elect", "svc", "--value", strings.Repeat("x", engine.MaxElectionValue+1), "--", "true"}, "--value:"},
		{[]string{"elect", "", "--value", "v", "--", "true"}, "NAME:"},
		{[]string{"elect", "svc", "--value", "v"}, "missing --"},
		{[]string{"elect", "--observe", "svc", "--value", "v"}, "--observe takes no --value"},
		{[]string{"elect", "--ttl", "10", "svc", "--value", "v", "--", "true"}, "--ttl"},
		{[]string{"elect", "--observe", "--poll", "-1s", "svc"}, "--poll"},
	} {
		r := liblock(t, nodes, tc.args...)
		assert.Equal(t, exitUsage, r.code, "%q", tc.args)
		assert.Contains(t, r.stderr, tc.want, "%q", tc.args)
	}
	dir := t.TempDir()
	cmd, out, errb := command(nodes, "elect", "svc", "--value", "a", "--", "sh", "-c", leaderScript)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	readTerm(t, dir)
	r := liblock(t, nodes, "elect", "--wait", "0s", "svc", "--value", "b", "--", "true")
	assert.Equal(t, exitNotAcquired, r.code)
	r = liblock(t, nodes, "elect", "--observe", "--count", "1", "svc")
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stdout, `svc: leader "a" term`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644))
	assert.Equal(t, 3, wait(t, cmd, out, errb).code)
	assertOnlyCounters(t, c)
}
