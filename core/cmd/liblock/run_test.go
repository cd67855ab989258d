package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/require"
)

// TestRunExitCode: the command's own code comes back, 0 and 3 alike, and
// nothing is held afterwards.
func TestRunExitCode(t *testing.T) {
	c := redistest.Start(t, 3)
	for _, want := range []int{0, 3} {
		r := liblock(t, nodesOf(c), "run", "--ttl", "5s", "job", "--", "sh", "-c", "exit "+strconv.Itoa(want))
		require.Equal(t, want, r.code, "exit, want the command's")
		c.AssertNoKeys(t)
	}
	// Killed by a signal: 128 + the signal, as a shell says it.
	r := liblock(t, nodesOf(c), "run", "job", "--", "sh", "-c", "kill -KILL $$")
	require.Equal(t, 128+int(syscall.SIGKILL), r.code, "exit of a command killed by SIGKILL")
	// Not found, not executable.
	r = liblock(t, nodesOf(c), "run", "job", "--", filepath.Join(t.TempDir(), "nothing"))
	require.Equal(t, exitNotFound, r.code, "missing command: exit")
	notExec := filepath.Join(t.TempDir(), "script")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	r = liblock(t, nodesOf(c), "run", "job", "--", notExec)
	require.Equal(t, exitCannotExec, r.code, "non-executable command: exit")
	c.AssertNoKeys(t)
}

// TestRunEnv: the command sees the resource, its token (which is the
// value of the key on every node while it runs) and the fence.
func TestRunEnv(t *testing.T) {
	c := redistest.Start(t, 3)
	dir := t.TempDir()
	script := `printf '%s\n%s\n%s\n' "$LIBLOCK_RESOURCE" "$LIBLOCK_TOKEN" "$LIBLOCK_FENCE" > env.tmp && mv env.tmp env
while [ ! -e go ]; do sleep 0.01; done`
	cmd, out, errb := command(nodesOf(c), "run", "--fence", "--key-prefix", "app:", "orders:42", "--", "sh", "-c", script)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	eventually(t, 20*time.Second, "the command wrote its environment", func() bool { return exists(filepath.Join(dir, "env")) })
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 3, "environment: %q", lines)
	require.Equal(t, "orders:42", lines[0], "LIBLOCK_RESOURCE")
	require.Len(t, lines[1], 36, "LIBLOCK_TOKEN %q", lines[1])
	require.NotEmpty(t, lines[2], "the third variable")
	require.NotEqual(t, "0", lines[2], "the third variable")
	// The acquire and the release return at a quorum: the third node's
	// SET, and its DEL, may come a moment later.
	for _, n := range c.Nodes {
		eventually(t, 5*time.Second, fmt.Sprintf("node %d holds the token", n.Index), func() bool {
			v, err := n.Do("GET", "app:orders:42")
			require.NoError(t, err)
			return v == lines[1]
		})
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o644))
	r := wait(t, cmd, out, errb)
	require.Zero(t, r.code, "exit; stderr: %s", r.stderr)
	for _, n := range c.Nodes {
		eventually(t, 5*time.Second, fmt.Sprintf("node %d released the lock", n.Index), func() bool {
			v, _ := n.Do("GET", "app:orders:42")
			return v == "(nil)"
		})
	}
}

// TestRunForwardsSignals: SIGTERM to liblock reaches the command, whose
// own exit code (7, from its trap) comes back; the lock is released.
func TestRunForwardsSignals(t *testing.T) {
	c := redistest.Start(t, 3)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		dir := t.TempDir()
		script := `trap 'exit 7' TERM INT HUP; touch ready; while :; do sleep 0.01; done`
		cmd, out, errb := command(nodesOf(c), "run", "job", "--", "sh", "-c", script)
		cmd.Dir = dir
		require.NoError(t, cmd.Start())
		eventually(t, 20*time.Second, "the command started", func() bool { return exists(filepath.Join(dir, "ready")) })
		require.NoError(t, cmd.Process.Signal(sig))
		r := wait(t, cmd, out, errb)
		require.Equal(t, 7, r.code, "%v: exit, want the command's", sig)
		c.AssertNoKeys(t)
	}
}

// TestRunWaitZero: --wait 0 on a held lock is flock -n: exit 65 at once,
// the command never started.
func TestRunWaitZero(t *testing.T) {
	c := redistest.Start(t, 3)
	held := holder(t, c, "job")
	for _, n := range c.Nodes {
		_, err := n.Do("CONFIG", "RESETSTAT")
		require.NoError(t, err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r := liblock(t, nodesOf(c), "run", "--wait", "0", "job", "--", "touch", marker)
	require.Equal(t, exitNotAcquired, r.code, "exit")
	require.Contains(t, r.stderr, "held elsewhere")
	require.False(t, exists(marker), "the command ran without the lock")
	// One attempt: one SET per node, no retry, no subscription.
	for _, n := range c.Nodes {
		// liblock may exit on two refusals, before the third node ran its SET.
		eventually(t, 5*time.Second, "the attempt reached every node", func() bool { return calls(t, n, "set") >= 1 })
		require.Equal(t, 1, calls(t, n, "set"), "node %d: SETs, want 1 attempt", n.Index)
		require.Zero(t, calls(t, n, "subscribe"), "node %d: SUBSCRIBEs, want no wait", n.Index)
	}
	// A short wait gives up the same way.
	r = liblock(t, nodesOf(c), "run", "--wait", "100ms", "job", "--", "touch", marker)
	require.Equal(t, exitNotAcquired, r.code, "--wait 100ms: exit")
	require.False(t, exists(marker), "--wait 100ms: the command ran without the lock")
	for _, n := range c.Nodes {
		v, _ := n.Do("GET", "job")
		require.Equal(t, held.Token(), v, "node %d: the holder's key changed", n.Index)
	}
}

// lossScript is a command that records its pid and a grandchild's; the
// grandchild writes "grandchild-termed" when SIGTERM reaches it.
const lossScript = `sh -c 'trap "touch grandchild-termed; exit 0" TERM; while :; do sleep 0.01; done' &
echo $! > grandchild.tmp && mv grandchild.tmp grandchild
%TRAP%
echo $$ > pid.tmp && mv pid.tmp pid
while :; do sleep 0.01; done`

// loseLock runs a command under a short lock, makes the lock lose its
// quorum (the key deleted on 2 of 3 nodes) and returns liblock's result and
// the command's and its grandchild's pids.
func loseLock(t *testing.T, trap string, extra ...string) (result, string, int, int) {
	c := redistest.Start(t, 3)
	dir := t.TempDir()
	args := append([]string{"run", "--ttl", "600ms", "--node-timeout", "50ms"}, extra...)
	args = append(args, "job", "--", "sh", "-c", strings.Replace(lossScript, "%TRAP%", trap, 1))
	cmd, out, errb := command(nodesOf(c), args...)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	pid := readPID(t, filepath.Join(dir, "pid"))
	grandchild := readPID(t, filepath.Join(dir, "grandchild"))
	// The acquire returned at a quorum: a SET reaching node 0 or 1 after
	// the DEL below would keep the lock on a quorum.
	for _, n := range c.Nodes {
		eventually(t, 5*time.Second, fmt.Sprintf("node %d holds the lock", n.Index), func() bool {
			v, _ := n.Do("EXISTS", "job")
			return v == "1"
		})
	}
	for _, n := range c.Nodes[:2] {
		_, err := n.Do("DEL", "job")
		require.NoError(t, err)
	}
	r := wait(t, cmd, out, errb)
	for _, p := range []int{pid, grandchild} {
		eventually(t, 10*time.Second, "process "+strconv.Itoa(p)+" gone", func() bool { return !alive(p) })
	}
	c.AssertNoKeys(t)
	return r, dir, pid, grandchild
}

// TestRunKilledOnLoss: a lost lock ends the command (SIGTERM, which its
// trap records) and its whole group; liblock exits 70, loss winning over
// the command's own code (0 from its trap).
func TestRunKilledOnLoss(t *testing.T) {
	// The command's trap waits for the grandchild, so both traps ran
	// before the command exits.
	r, dir, _, _ := loseLock(t, `trap 'touch termed; wait; exit 0' TERM`)
	require.Equal(t, exitLost, r.code, "exit")
	require.Contains(t, r.stderr, `the command ended (exit 0) after "job" was lost`)
	require.True(t, exists(filepath.Join(dir, "termed")), "the command got no SIGTERM")
	require.True(t, exists(filepath.Join(dir, "grandchild-termed")), "the command's own child got no SIGTERM")
}

// TestRunGraceThenKill: a command that ignores SIGTERM is SIGKILLed after
// --grace.
func TestRunGraceThenKill(t *testing.T) {
	r, _, _, _ := loseLock(t, `trap '' TERM`, "--grace", "200ms")
	require.Equal(t, exitLost, r.code, "exit after SIGKILL")
	require.Contains(t, r.stderr, "SIGKILL")
}

// TestRunLeftoversKilled: what the command leaves in its process group
// when it exits is killed before the lock is released.
func TestRunLeftoversKilled(t *testing.T) {
	c := redistest.Start(t, 3)
	dir := t.TempDir()
	cmd, out, errb := command(nodesOf(c), "run", "job", "--", "sh", "-c", `sleep 1000 & echo $! > grandchild; exit 4`)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	r := wait(t, cmd, out, errb)
	require.Equal(t, 4, r.code, "exit")
	grandchild := readPID(t, filepath.Join(dir, "grandchild"))
	eventually(t, 10*time.Second, "the grandchild gone", func() bool { return !alive(grandchild) })
	c.AssertNoKeys(t)
}

// TestRunUnavailable: too many nodes down is 69, and the command never
// runs.
func TestRunUnavailable(t *testing.T) {
	c := redistest.Start(t, 3)
	for _, n := range c.Nodes[:2] {
		require.NoError(t, n.Kill())
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r := liblock(t, nodesOf(c), "run", "--wait", "0", "job", "--", "touch", marker)
	require.Equal(t, exitUnavailable, r.code, "exit")
	require.False(t, exists(marker), "the command ran without the lock")
}

// calls is how many times the node ran command since the last RESETSTAT.
func calls(t *testing.T, n *redistest.Node, command string) int {
	t.Helper()
	k, err := n.CommandCalls(command)
	require.NoError(t, err)
	return k
}

// TestRunSignalWhileWaiting: SIGTERM while liblock waits for a held lock
// gives up (128+15, as a shell reports it); the command never runs and
// the holder's key is untouched.
func TestRunSignalWhileWaiting(t *testing.T) {
	c := redistest.Start(t, 3)
	held := holder(t, c, "job")
	marker := filepath.Join(t.TempDir(), "ran")
	cmd, out, errb := command(nodesOf(c), "run", "--wait", "50s", "job", "--", "touch", marker)
	require.NoError(t, cmd.Start())
	// A waiting acquire listens for the release on every node.
	eventually(t, 20*time.Second, "liblock waits", func() bool {
		v, err := c.Nodes[0].Do("PUBSUB", "NUMSUB", "liblock:released:job")
		return err == nil && strings.HasSuffix(v, "\n1")
	})
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	r := wait(t, cmd, out, errb)
	require.Equal(t, 128+int(syscall.SIGTERM), r.code, "exit")
	require.Contains(t, r.stderr, "SIGTERM while waiting")
	require.False(t, exists(marker), "the command ran without the lock")
	for _, n := range c.Nodes {
		v, _ := n.Do("GET", "job")
		require.Equal(t, held.Token(), v, "node %d: the holder's key changed", n.Index)
	}
}
