package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// treeScript starts two grandchildren that each append a line to a file
// every 10 ms: one in the command's process group (a subshell), one that
// left it (a double fork into setsid: its own session and group, and an
// orphan at once). Their pids go to gc-group and gc-setsid, the command's
// to cmd.
//
// Their output goes nowhere: a tree that outlives liblock (the negative
// control) must not hold the test's pipes open.
const treeScript = `exec >/dev/null 2>&1
echo $$ > cmd.tmp && mv cmd.tmp cmd
( while :; do echo x >> lines-group; sleep 0.01; done ) &
echo $! > gc-group.tmp && mv gc-group.tmp gc-group
( setsid sh -c 'echo $$ > gc-setsid.tmp && mv gc-setsid.tmp gc-setsid; while :; do echo x >> lines-setsid; sleep 0.01; done' & )
while :; do sleep 0.01; done`

// watcherScript is the next holder's command: it records how long each
// file of the old tree was when it started (it holds the lock then), then
// runs until "stop" appears.
const watcherScript = `for f in lines-group lines-setsid; do wc -c < $OLD/$f > $f.seen; done
touch seen
while [ ! -e stop ]; do sleep 0.01; done`

// oldTree is a first holder's tree of grandchildren.
type oldTree struct {
	dir  string
	pids []int
}

func startedTree(t *testing.T, dir string) oldTree {
	t.Helper()
	tr := oldTree{dir: dir}
	for _, f := range []string{"cmd", "gc-group", "gc-setsid"} {
		tr.pids = append(tr.pids, readPID(t, filepath.Join(dir, f)))
	}
	// Kill whatever survives the test (the negative control's tree).
	t.Cleanup(func() {
		for _, p := range tr.pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	for _, f := range []string{"lines-group", "lines-setsid"} {
		eventually(t, 20*time.Second, f+" written", func() bool { return size(filepath.Join(dir, f)) > 0 })
	}
	return tr
}

func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// wroteAfter reports whether the old tree wrote a line after the next
// holder started (whose sizes are in next/*.seen): it polls until every
// old grandchild is gone (then the files can grow no more) or a file grew.
func (tr oldTree) wroteAfter(t *testing.T, next string) bool {
	t.Helper()
	eventually(t, 30*time.Second, "the next holder's command started", func() bool { return exists(filepath.Join(next, "seen")) })
	seen := map[string]int64{}
	for _, f := range []string{"lines-group", "lines-setsid"} {
		b, err := os.ReadFile(filepath.Join(next, f+".seen"))
		require.NoError(t, err)
		n, err := strconv.ParseInt(string(trimNL(b)), 10, 64)
		require.NoError(t, err, "%s.seen: %q", f, b)
		seen[f] = n
	}
	grew := func() bool {
		for f, n := range seen {
			if size(filepath.Join(tr.dir, f)) > n {
				return true
			}
		}
		return false
	}
	wrote := false
	eventually(t, 30*time.Second, "every old grandchild gone, or a line written under the next holder", func() bool {
		if grew() {
			wrote = true
			return true
		}
		for _, p := range tr.pids {
			if alive(p) {
				return false
			}
		}
		wrote = grew() // a last line between the check above and the death
		return true
	})
	return wrote
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return b
}

// runTreeOnKill: `liblock run` with a tree of writing grandchildren is
// SIGKILLed; a second `liblock run --wait` takes the lock once the ttl
// ran out. It returns whether the old tree wrote after the second runner
// held the lock.
func runTreeOnKill(t *testing.T, env ...string) bool {
	c := redistest.Start(t, 3)
	nodes := nodesOf(c)
	first := t.TempDir()
	cmd, out, errb := command(nodes, "run", "--ttl", "2s", "--node-timeout", "500ms", "job", "--", "sh", "-c", treeScript)
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = first
	require.NoError(t, cmd.Start())
	tr := startedTree(t, first)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	r := wait(t, cmd, out, errb)
	require.Equal(t, -1, r.code, "liblock killed by SIGKILL")

	next := t.TempDir()
	cmd2, out2, errb2 := command(nodes, "run", "--wait", "30s", "--node-timeout", "500ms", "job", "--", "sh", "-c", watcherScript)
	cmd2.Env = append(cmd2.Env, "OLD="+first)
	cmd2.Dir = next
	require.NoError(t, cmd2.Start())
	wrote := tr.wroteAfter(t, next)
	require.NoError(t, os.WriteFile(filepath.Join(next, "stop"), nil, 0o644))
	require.Zero(t, wait(t, cmd2, out2, errb2).code, "the second runner's exit")
	return wrote
}

// TestRunTreeDiesWithLiblock: liblock SIGKILLed, its command's whole tree
// — the grandchild in its group and the one that left by setsid — is gone
// before the next runner holds the lock: no line after.
func TestRunTreeDiesWithLiblock(t *testing.T) {
	assert.False(t, runTreeOnKill(t), "the old command's tree wrote a line while the next runner held the lock")
}

// TestRunTreeNegativeControl: with the supervisor's kill switched off, the
// same check sees the old tree write under the next holder.
func TestRunTreeNegativeControl(t *testing.T) {
	assert.True(t, runTreeOnKill(t, "LIBLOCK_TEST_SUPERVISOR_NO_KILL=1"), "the check missed a tree that outlived liblock")
}

// electTreeOnKill: two `liblock elect` for one election; the leader runs
// the tree of writing grandchildren, the standby the watcher; the leader's
// liblock is SIGKILLed. It returns whether the old leader's tree wrote
// after the next leader's command started (in its term).
func electTreeOnKill(t *testing.T, env ...string) bool {
	c := redistest.Start(t, 3)
	nodes := nodesOf(c)
	first, next := t.TempDir(), t.TempDir()
	cmd, out, errb := command(nodes, "elect", "--ttl", "2s", "--node-timeout", "500ms", "svc", "--value", "old", "--", "sh", "-c",
		`echo "$LIBLOCK_TERM" > term; `+treeScript)
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = first
	require.NoError(t, cmd.Start())
	tr := startedTree(t, first)
	cmd2, out2, errb2 := command(nodes, "elect", "--ttl", "2s", "--node-timeout", "500ms", "svc", "--value", "next", "--", "sh", "-c",
		`echo "$LIBLOCK_TERM" > term; `+watcherScript)
	cmd2.Env = append(cmd2.Env, "OLD="+first)
	cmd2.Dir = next
	require.NoError(t, cmd2.Start())
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	r := wait(t, cmd, out, errb)
	require.Equal(t, -1, r.code, "liblock killed by SIGKILL")
	wrote := tr.wroteAfter(t, next)
	terms := [2]int{}
	for i, d := range []string{first, next} {
		b, err := os.ReadFile(filepath.Join(d, "term"))
		require.NoError(t, err)
		terms[i], err = strconv.Atoi(string(trimNL(b)))
		require.NoError(t, err)
	}
	require.Greater(t, terms[1], terms[0], "the next leader's term")
	require.NoError(t, os.WriteFile(filepath.Join(next, "stop"), nil, 0o644))
	require.Zero(t, wait(t, cmd2, out2, errb2).code, "the next leader's exit")
	return wrote
}

// TestElectTreeDiesWithLiblock: the old leader's whole tree is gone
// before the next leader's command runs in its term.
func TestElectTreeDiesWithLiblock(t *testing.T) {
	assert.False(t, electTreeOnKill(t), "the old leader's tree wrote a line during the next leader's term")
}

// TestElectTreeNegativeControl: the supervisor's kill switched off, the
// check sees the old leader's tree write during the next term.
func TestElectTreeNegativeControl(t *testing.T) {
	assert.True(t, electTreeOnKill(t, "LIBLOCK_TEST_SUPERVISOR_NO_KILL=1"), "the check missed a tree that outlived liblock")
}

// TestRunLeftOutOfGroupKilled: what the command leaves when it exits —
// in its group or out of it (setsid, double fork) — is killed before the
// lock is released.
func TestRunLeftOutOfGroupKilled(t *testing.T) {
	c := redistest.Start(t, 3)
	dir := t.TempDir()
	cmd, out, errb := command(nodesOf(c), "run", "--node-timeout", "500ms", "job", "--", "sh", "-c",
		`( setsid sh -c 'echo $$ > gc.tmp && mv gc.tmp gc; exec sleep 1000' & )
while [ ! -e gc ]; do sleep 0.01; done; exit 5`)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	r := wait(t, cmd, out, errb)
	require.Equal(t, 5, r.code, "exit")
	gc := readPID(t, filepath.Join(dir, "gc"))
	// liblock returned after the release: the process was gone before.
	require.False(t, alive(gc), "the setsid grandchild outlived the lock")
	c.AssertNoKeys(t)
}

// TestRunSupervisorKilled: the supervisor SIGKILLed by someone: its
// command's tree is re-parented to liblock, which kills it, releases, and
// says so (71).
func TestRunSupervisorKilled(t *testing.T) {
	c := redistest.Start(t, 3)
	dir := t.TempDir()
	cmd, out, errb := command(nodesOf(c), "run", "--node-timeout", "500ms", "job", "--", "sh", "-c",
		`echo $PPID > sup.tmp && mv sup.tmp sup; `+treeScript)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	tr := startedTree(t, dir)
	sup := readPID(t, filepath.Join(dir, "sup"))
	require.NoError(t, syscall.Kill(sup, syscall.SIGKILL))
	r := wait(t, cmd, out, errb)
	require.Equal(t, exitInternal, r.code, "exit")
	require.Contains(t, r.stderr, "the supervisor died")
	for _, p := range tr.pids {
		require.False(t, alive(p), "grandchild %d outlived liblock", p)
	}
	c.AssertNoKeys(t)
}
