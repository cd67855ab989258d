package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestRunExitCode: the command's own code comes back, 0 and 3 alike, and
// nothing is held afterwards.
func TestRunExitCode(t *testing.T) {
	c := redistest.Start(t, 3)
	for _, want := range []int{0, 3} {
		r := liblock(t, nodesOf(c), "run", "--ttl", "5s", "job", "--", "sh", "-c", "exit "+strconv.Itoa(want))
		if r.code != want {
			t.Fatalf("exit %d, want the command's %d", r.code, want)
		}
		c.AssertNoKeys(t)
	}
	// Killed by a signal: 128 + the signal, as a shell says it.
	r := liblock(t, nodesOf(c), "run", "job", "--", "sh", "-c", "kill -KILL $$")
	if r.code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want %d", r.code, 128+int(syscall.SIGKILL))
	}
	// Not found, not executable.
	if r := liblock(t, nodesOf(c), "run", "job", "--", filepath.Join(t.TempDir(), "nothing")); r.code != exitNotFound {
		t.Fatalf("missing command: exit %d, want %d", r.code, exitNotFound)
	}
	notExec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := liblock(t, nodesOf(c), "run", "job", "--", notExec); r.code != exitCannotExec {
		t.Fatalf("non-executable command: exit %d, want %d", r.code, exitCannotExec)
	}
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the command wrote its environment", func() bool { return exists(filepath.Join(dir, "env")) })
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "orders:42" || len(lines[1]) != 36 || lines[2] == "" || lines[2] == "0" {
		t.Fatalf("environment: %q", lines)
	}
	for _, n := range c.Nodes {
		if v, err := n.Do("GET", "app:orders:42"); err != nil || v != lines[1] {
			t.Fatalf("node %d holds %q (%v), want the token %q", n.Index, v, err, lines[1])
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, cmd, out, errb); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	for _, n := range c.Nodes {
		if v, _ := n.Do("GET", "app:orders:42"); v != "(nil)" {
			t.Fatalf("node %d still holds the lock: %q", n.Index, v)
		}
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
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "the command started", func() bool { return exists(filepath.Join(dir, "ready")) })
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if r := wait(t, cmd, out, errb); r.code != 7 {
			t.Fatalf("%v: exit %d, want the command's 7", sig, r.code)
		}
		c.AssertNoKeys(t)
	}
}

// TestRunWaitZero: --wait 0 on a held lock is flock -n: exit 65 at once,
// the command never started.
func TestRunWaitZero(t *testing.T) {
	c := redistest.Start(t, 3)
	held := holder(t, c, "job")
	for _, n := range c.Nodes {
		if _, err := n.Do("CONFIG", "RESETSTAT"); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r := liblock(t, nodesOf(c), "run", "--wait", "0", "job", "--", "touch", marker)
	if r.code != exitNotAcquired || !strings.Contains(r.stderr, "held elsewhere") {
		t.Fatalf("exit %d, want %d (held elsewhere)", r.code, exitNotAcquired)
	}
	if exists(marker) {
		t.Fatal("the command ran without the lock")
	}
	// One attempt: one SET per node, no retry, no subscription.
	for _, n := range c.Nodes {
		if sets, subs := calls(t, n, "set"), calls(t, n, "subscribe"); sets != 1 || subs != 0 {
			t.Fatalf("node %d: %d SETs and %d SUBSCRIBEs, want 1 attempt and no wait", n.Index, sets, subs)
		}
	}
	// A short wait gives up the same way.
	if r := liblock(t, nodesOf(c), "run", "--wait", "100ms", "job", "--", "touch", marker); r.code != exitNotAcquired || exists(marker) {
		t.Fatalf("--wait 100ms: exit %d, ran %v", r.code, exists(marker))
	}
	for _, n := range c.Nodes {
		if v, _ := n.Do("GET", "job"); v != held.Token() {
			t.Fatalf("node %d: the holder's key became %q", n.Index, v)
		}
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, filepath.Join(dir, "pid"))
	grandchild := readPID(t, filepath.Join(dir, "grandchild"))
	for _, n := range c.Nodes[:2] {
		if _, err := n.Do("DEL", "job"); err != nil {
			t.Fatal(err)
		}
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
	if r.code != exitLost || !strings.Contains(r.stderr, `the command ended (exit 0) after "job" was lost`) {
		t.Fatalf("exit %d, want %d (lost)", r.code, exitLost)
	}
	if !exists(filepath.Join(dir, "termed")) {
		t.Fatal("the command got no SIGTERM")
	}
	if !exists(filepath.Join(dir, "grandchild-termed")) {
		t.Fatal("the command's own child got no SIGTERM")
	}
}

// TestRunGraceThenKill: a command that ignores SIGTERM is SIGKILLed after
// --grace.
func TestRunGraceThenKill(t *testing.T) {
	r, _, _, _ := loseLock(t, `trap '' TERM`, "--grace", "200ms")
	if r.code != exitLost || !strings.Contains(r.stderr, "SIGKILL") {
		t.Fatalf("exit %d, want %d after SIGKILL", r.code, exitLost)
	}
}

// TestRunLeftoversKilled: what the command leaves in its process group
// when it exits is killed before the lock is released.
func TestRunLeftoversKilled(t *testing.T) {
	c := redistest.Start(t, 3)
	dir := t.TempDir()
	cmd, out, errb := command(nodesOf(c), "run", "job", "--", "sh", "-c", `sleep 1000 & echo $! > grandchild; exit 4`)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, cmd, out, errb); r.code != 4 {
		t.Fatalf("exit %d, want 4", r.code)
	}
	grandchild := readPID(t, filepath.Join(dir, "grandchild"))
	eventually(t, 10*time.Second, "the grandchild gone", func() bool { return !alive(grandchild) })
	c.AssertNoKeys(t)
}

// TestRunUnavailable: too many nodes down is 69, and the command never
// runs.
func TestRunUnavailable(t *testing.T) {
	c := redistest.Start(t, 3)
	for _, n := range c.Nodes[:2] {
		if err := n.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r := liblock(t, nodesOf(c), "run", "--wait", "0", "job", "--", "touch", marker)
	if r.code != exitUnavailable || exists(marker) {
		t.Fatalf("exit %d (want %d), ran %v", r.code, exitUnavailable, exists(marker))
	}
}

// calls is how many times the node ran command since the last RESETSTAT.
func calls(t *testing.T, n *redistest.Node, command string) int {
	t.Helper()
	stats, err := n.Do("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(stats, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":calls="); ok {
			k, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return k
		}
	}
	return 0
}

// TestRunSignalWhileWaiting: SIGTERM while liblock waits for a held lock
// gives up (128+15, as a shell reports it); the command never runs and
// the holder's key is untouched.
func TestRunSignalWhileWaiting(t *testing.T) {
	c := redistest.Start(t, 3)
	held := holder(t, c, "job")
	marker := filepath.Join(t.TempDir(), "ran")
	cmd, out, errb := command(nodesOf(c), "run", "--wait", "50s", "job", "--", "touch", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A waiting acquire listens for the release on every node.
	eventually(t, 20*time.Second, "liblock waits", func() bool {
		v, err := c.Nodes[0].Do("PUBSUB", "NUMSUB", "liblock:released:job")
		return err == nil && strings.HasSuffix(v, "\n1")
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := wait(t, cmd, out, errb)
	if r.code != 128+int(syscall.SIGTERM) || !strings.Contains(r.stderr, "SIGTERM while waiting") || exists(marker) {
		t.Fatalf("exit %d (want %d), ran %v", r.code, 128+int(syscall.SIGTERM), exists(marker))
	}
	for _, n := range c.Nodes {
		if v, _ := n.Do("GET", "job"); v != held.Token() {
			t.Fatalf("node %d: the holder's key became %q", n.Index, v)
		}
	}
}
