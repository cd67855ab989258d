package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envScript writes the lock's environment to env (atomically), then runs
// until the file go exists.
const envScript = `printf '%s\n%s\n%s\n%s\n' "$LIBLOCK_TOKEN" "$LIBLOCK_PERMITS" "$LIBLOCK_SLOT" "$LIBLOCK_MODE" > env.tmp && mv env.tmp env
while [ ! -e ../go ]; do sleep 0.01; done`

// started is a liblock run under way in a directory of its own.
type started struct {
	cmd       *exec.Cmd
	out, errb *bytes.Buffer
	dir       string
}

// startRun starts `liblock run ARGS NAME -- sh -c envScript` in a new
// subdirectory of parent.
func startRun(t *testing.T, c *redistest.Cluster, parent string, args ...string) *started {
	t.Helper()
	dir, err := os.MkdirTemp(parent, "run-")
	require.NoError(t, err)
	cmd, out, errb := command(nodesOf(c), append(append([]string{"run"}, args...), "--", "sh", "-c", envScript)...)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	return &started{cmd, out, errb, dir}
}

// env waits for the command's environment lines: token, permits, slot, mode.
func (s *started) env(t *testing.T) []string {
	t.Helper()
	path := filepath.Join(s.dir, "env")
	eventually(t, 20*time.Second, "the command in "+s.dir+" wrote its environment", func() bool { return exists(path) })
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestRunPermits: with --permits 2, two commands run at once, each with
// its permit's slot (distinct) and count in its environment; a third with
// --wait 0 exits 65 "held elsewhere" and never starts; inspect --permits 2
// shows both permits in use; when they end, no key is left.
func TestRunPermits(t *testing.T) {
	c := redistest.Start(t, 3)
	parent := t.TempDir()
	a := startRun(t, c, parent, "--permits", "2", "--owner", "job-a", "jobs")
	b := startRun(t, c, parent, "--permits", "2", "--owner", "job-b", "jobs")
	ea, eb := a.env(t), b.env(t) // both run at once: neither ends before "go"
	require.Len(t, ea, 4, "environment %q", ea)
	require.Len(t, eb, 4, "environment %q", eb)
	assert.Equal(t, "2", ea[1], "LIBLOCK_PERMITS")
	assert.Equal(t, "2", eb[1], "LIBLOCK_PERMITS")
	assert.ElementsMatch(t, []string{"0", "1"}, []string{ea[2], eb[2]}, "LIBLOCK_SLOT: one each")
	assert.NotEqual(t, ea[0], eb[0], "two permits, two tokens")
	assert.Empty(t, ea[3], "LIBLOCK_MODE of a permit")

	// Every slot's key on a quorum: that is what a permit is. Not on every
	// node: the two started at once, so a node may have granted b's first
	// attempt the slot a won elsewhere; the engine deletes such split grants
	// (README, "Semaphore safety"), and that node then holds neither.
	base := engine.SemKey("jobs", 2)
	for slot, tok := range map[string]string{ea[2]: ea[0], eb[2]: eb[0]} {
		k, _ := strconv.Atoi(slot)
		eventually(t, 5*time.Second, "slot "+slot+" on a quorum", func() bool {
			held := 0
			for _, n := range c.Nodes {
				if v, _ := n.Do("GET", engine.SlotKey(base, k)); strings.HasPrefix(v, tok) {
					held++
				}
			}
			return held >= len(c.Nodes)/2+1
		})
	}

	marker := filepath.Join(parent, "third-ran")
	r := liblock(t, nodesOf(c), "run", "--permits", "2", "--wait", "0", "jobs", "--", "touch", marker)
	require.Equal(t, exitNotAcquired, r.code, "the third: exit")
	assert.Contains(t, r.stderr, `a permit of "jobs" (2 permits) is held elsewhere`)
	assert.False(t, exists(marker), "the third command ran without a permit")

	// A semaphore of another count is another semaphore; the mutex too.
	r = liblock(t, nodesOf(c), "run", "--permits", "3", "--wait", "0", "jobs", "--", "true")
	assert.Zero(t, r.code, "--permits 3 is another semaphore: exit")

	r = mainOut("inspect", "--nodes", nodesOf(c), "--permits", "2", "--json", "jobs")
	require.Zero(t, r.code, "inspect: %s", r.stderr)
	var in inspectJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &in), r.stdout)
	assert.Equal(t, 2, in.Permits, r.stdout)
	if assert.NotNil(t, in.InUse, r.stdout) {
		assert.Equal(t, 2, *in.InUse, r.stdout)
	}
	owners := []string{}
	for _, h := range in.Holders {
		owners = append(owners, h.Owner)
		if assert.NotNil(t, h.ValidityMS, r.stdout) {
			assert.Positive(t, *h.ValidityMS, r.stdout)
		}
	}
	assert.ElementsMatch(t, []string{"job-a", "job-b"}, owners, r.stdout)
	r = mainOut("inspect", "--nodes", nodesOf(c), "--permits", "2", "jobs")
	require.Zero(t, r.code, "inspect: %s", r.stderr)
	assert.Contains(t, r.stdout, "IN USE")
	assert.Contains(t, r.stdout, "job-b")

	require.NoError(t, os.WriteFile(filepath.Join(parent, "go"), nil, 0o644))
	for _, s := range []*started{a, b} {
		r := wait(t, s.cmd, s.out, s.errb)
		assert.Zero(t, r.code, "exit; stderr: %s", r.stderr)
	}
	c.AssertNoKeys(t)
}

// TestRunPermitLost: a permit whose slot is deleted on 2 of 3 nodes is
// lost: the command is killed (SIGTERM; it exits at once) and liblock
// exits 70, as for the mutex.
func TestRunPermitLost(t *testing.T) {
	c := redistest.Start(t, 3)
	parent := t.TempDir()
	// A node timeout well above a loaded machine's stalls: with the
	// default 50 ms, a node whose SET answered late counted as refusing
	// (the acquire returned at a quorum) and never held the slot, which
	// the wait below needs on every node.
	s := startRun(t, c, parent, "--permits", "3", "--ttl", "3s", "--node-timeout", "1s", "sem")
	env := s.env(t)
	slot, err := strconv.Atoi(env[2])
	require.NoError(t, err, "LIBLOCK_SLOT %q", env[2])
	key := engine.SlotKey(engine.SemKey("sem", 3), slot)
	for _, n := range c.Nodes { // else a late grant could set it again after the DEL
		eventually(t, 5*time.Second, "the slot on every node", func() bool {
			v, _ := n.Do("EXISTS", key)
			return v == "1"
		})
	}
	for _, n := range c.Nodes[:2] {
		_, err := n.Do("DEL", key)
		require.NoError(t, err)
	}
	r := wait(t, s.cmd, s.out, s.errb)
	require.Equal(t, exitLost, r.code, "exit")
	assert.Contains(t, r.stderr, "lost")
	c.AssertNoKeys(t)
}

// TestRunReadWrite: two --read commands run together; --write --wait 0
// is refused while they do (exit 65, never started); after them a writer
// runs, with LIBLOCK_MODE=write.
func TestRunReadWrite(t *testing.T) {
	c := redistest.Start(t, 3)
	parent := t.TempDir()
	a := startRun(t, c, parent, "--read", "doc")
	b := startRun(t, c, parent, "--read", "doc")
	assert.Equal(t, "read", a.env(t)[3], "LIBLOCK_MODE")
	assert.Equal(t, "read", b.env(t)[3], "LIBLOCK_MODE")
	eventually(t, 5*time.Second, "both readers on a quorum", func() bool {
		in, err := inspectRW(c)
		return err == nil && len(in.Readers) == 2
	})
	r := mainOut("inspect", "--nodes", nodesOf(c), "--rw", "doc")
	require.Zero(t, r.code, "inspect --rw: %s", r.stderr)
	assert.Equal(t, 2, strings.Count(r.stdout, "reader"), r.stdout)

	marker := filepath.Join(parent, "writer-ran")
	r = liblock(t, nodesOf(c), "run", "--write", "--wait", "0", "doc", "--", "touch", marker)
	require.Equal(t, exitNotAcquired, r.code, "writer while readers hold: exit")
	assert.Contains(t, r.stderr, `the writer of "doc" is held elsewhere`)
	assert.False(t, exists(marker), "the writer ran beside readers")

	require.NoError(t, os.WriteFile(filepath.Join(parent, "go"), nil, 0o644))
	for _, s := range []*started{a, b} {
		r := wait(t, s.cmd, s.out, s.errb)
		assert.Zero(t, r.code, "reader exit; stderr: %s", r.stderr)
	}
	r = liblock(t, nodesOf(c), "run", "--write", "doc", "--", "sh", "-c", `test "$LIBLOCK_MODE" = write`)
	assert.Zero(t, r.code, "writer after the readers: exit")
	c.AssertNoKeys(t)
}

func inspectRW(c *redistest.Cluster) (*core.Inspection, error) {
	client, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: 200 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	defer client.Close()
	return client.Inspect(context.Background(), "doc", core.InspectReadWrite())
}

// TestKindUsage: bad --permits values and contradictory kinds are usage
// errors naming the flag; nothing is sent (the node does not exist).
func TestKindUsage(t *testing.T) {
	const nodes = "redis://127.0.0.1:1"
	max := strconv.Itoa(core.MaxPermits + 1)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"run", "--permits", "0", "job", "--", "true"}, "--permits: must be 1 to 1024, got 0"},
		{[]string{"run", "--permits", "-2", "job", "--", "true"}, "--permits: must be 1 to 1024, got -2"},
		{[]string{"run", "--permits", max, "job", "--", "true"}, "--permits: must be 1 to 1024, got " + max},
		{[]string{"run", "--permits", "three", "job", "--", "true"}, `--permits: "three" is not a whole number`},
		{[]string{"run", "--permits", "1.5", "job", "--", "true"}, "--permits"},
		{[]string{"run", "--permits", "", "job", "--", "true"}, "--permits"},
		{[]string{"run", "--read", "--write", "job", "--", "true"}, "--read and --write"},
		{[]string{"run", "--permits", "2", "--write", "job", "--", "true"}, "--permits and --write"},
		{[]string{"inspect", "--permits", "0", "job"}, "--permits: must be 1 to 1024"},
		{[]string{"inspect", "--permits", "2", "--rw", "job"}, "--permits and --rw"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Setenv("LIBLOCK_NODES", nodes)
			r := mainOut(tc.args...)
			require.Equal(t, exitUsage, r.code, "exit; stderr %q", r.stderr)
			require.Contains(t, r.stderr, tc.says)
		})
	}
}
