package main

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doctor runs `liblock doctor --json` in-process over urls and returns its
// exit code and rows. The node timeout is generous: a loaded 2-core
// machine under -race must not turn PING round trips into findings.
func doctor(t *testing.T, urls []string, extra ...string) (int, []row, result) {
	t.Helper()
	args := append([]string{"doctor", "--json", "--node-timeout", "1s", "--nodes", strings.Join(urls, ",")}, extra...)
	r := mainOut(args...)
	if testing.Verbose() { // the table, for a reader of -v
		t.Logf("liblock %s\n%s", strings.Join(args[2:], " "), mainOut(append([]string{"doctor"}, args[2:]...)...).stdout)
	}
	var rows []row
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rw row
		require.NoError(t, json.Unmarshal([]byte(line), &rw), "not a JSON line: %q (exit %d, stderr %s)", line, r.code, r.stderr)
		rows = append(rows, rw)
	}
	return r.code, rows, r
}

// find returns the row of check on the node whose URL contains addr.
func find(t *testing.T, rows []row, addr, check string) row {
	t.Helper()
	for _, r := range rows {
		if strings.Contains(r.Node, addr) && r.Check == check {
			return r
		}
	}
	require.FailNow(t, "no row", "no %q row for %s in %+v", check, addr, rows)
	return row{}
}

func want(t *testing.T, rows []row, addr, check, status, says string) {
	t.Helper()
	r := find(t, rows, addr, check)
	require.Equal(t, status, r.Status, "%s %s: %q", addr, check, r.Detail)
	require.Contains(t, r.Detail, says, "%s %s", addr, check)
	if status != statusOK {
		require.NotEmpty(t, r.Fix, "%s %s: %s without a fix", addr, check, status)
	}
}

func do(t *testing.T, n *redistest.Node, args ...string) {
	t.Helper()
	_, err := n.Do(args...)
	require.NoError(t, err, "%q", args)
}

// TestDoctorHealthy: redistest's nodes are independent primaries without
// persistence: every check passes but persistence, which warns.
func TestDoctorHealthy(t *testing.T) {
	c := redistest.Start(t, 3)
	code, rows, _ := doctor(t, c.URLs())
	require.Zero(t, code, "exit: %+v", rows)
	want(t, rows, setNode, "node count", statusOK, "quorum 2")
	for _, n := range c.Nodes {
		for _, check := range []string{"reachable", "version", "role", "eviction", "commands", "lock", "independent"} {
			want(t, rows, n.Addr(), check, statusOK, "")
		}
		want(t, rows, n.Addr(), "persistence", statusWarn, "a restart forgets every lock")
		r := find(t, rows, n.Addr(), "clock")
		require.NotEqual(t, statusFail, r.Status, "clock: %+v", r)
	}
	for _, r := range rows {
		require.NotEqual(t, statusFail, r.Status, "fail: %+v", r)
	}
	c.AssertNoKeys(t) // the probes leave nothing
	// The table form: a header, the fixes, a summary.
	r := mainOut("doctor", "--node-timeout", "1s", "--nodes", nodesOf(c))
	require.Zero(t, r.code, "table: exit\n%s", r.stdout)
	for _, part := range []string{"NODE", "fix: keep a restarted node out", "0 fail"} {
		require.Contains(t, r.stdout, part, "table")
	}
}

// TestDoctorReplica: a replica among the nodes fails the role check, and
// both it and its primary fail the independence check.
func TestDoctorReplica(t *testing.T) {
	c := redistest.Start(t, 3)
	primary, replica := c.Nodes[0], c.Nodes[1]
	do(t, replica, "REPLICAOF", "127.0.0.1", strconv.Itoa(primary.Port))
	code, rows, _ := doctor(t, c.URLs())
	require.Equal(t, exitDoctorFail, code, "exit")
	want(t, rows, replica.Addr(), "role", statusFail, "a replica of "+primary.Addr())
	want(t, rows, replica.Addr(), "independent", statusFail, "a replica of")
	want(t, rows, primary.Addr(), "independent", statusFail, "the primary of")
	want(t, rows, c.Nodes[2].Addr(), "independent", statusOK, "")
	for _, r := range rows {
		if strings.Contains(r.Node, replica.Addr()) {
			require.NotContains(t, []string{"commands", "lock"}, r.Check, "a replica's writes were probed: %+v", r)
		}
	}
}

// TestDoctorSameServerTwice: one server under two names (127.0.0.1 and
// localhost) is caught by its run_id.
func TestDoctorSameServerTwice(t *testing.T) {
	c := redistest.Start(t, 2)
	alias := "redis://localhost:" + strconv.Itoa(c.Nodes[0].Port)
	code, rows, _ := doctor(t, append(c.URLs(), alias))
	require.Equal(t, exitDoctorFail, code, "exit")
	want(t, rows, c.Nodes[0].Addr(), "independent", statusFail, "the same server as redis://localhost")
	want(t, rows, c.Nodes[1].Addr(), "independent", statusOK, "")
}

// TestDoctorEviction: with maxmemory set, allkeys-* and volatile-* fail;
// noeviction passes.
func TestDoctorEviction(t *testing.T) {
	c := redistest.Start(t, 3)
	for i, policy := range []string{"allkeys-lru", "volatile-ttl", "noeviction"} {
		do(t, c.Nodes[i], "CONFIG", "SET", "maxmemory", "100mb")
		do(t, c.Nodes[i], "CONFIG", "SET", "maxmemory-policy", policy)
	}
	code, rows, _ := doctor(t, c.URLs())
	require.Equal(t, exitDoctorFail, code, "exit")
	want(t, rows, c.Nodes[0].Addr(), "eviction", statusFail, "any key can be evicted")
	want(t, rows, c.Nodes[1].Addr(), "eviction", statusFail, "every key with a ttl")
	want(t, rows, c.Nodes[2].Addr(), "eviction", statusOK, "noeviction")
}

// TestDoctorPersistence: appendfsync always passes; everysec and
// snapshots warn with what a restart costs.
func TestDoctorPersistence(t *testing.T) {
	c := redistest.Start(t, 3)
	do(t, c.Nodes[0], "CONFIG", "SET", "appendonly", "yes")
	do(t, c.Nodes[0], "CONFIG", "SET", "appendfsync", "always")
	do(t, c.Nodes[1], "CONFIG", "SET", "appendonly", "yes")
	do(t, c.Nodes[1], "CONFIG", "SET", "appendfsync", "everysec")
	do(t, c.Nodes[2], "CONFIG", "SET", "save", "900 1")
	code, rows, _ := doctor(t, c.URLs())
	require.Zero(t, code, "exit: warnings only, want 0")
	want(t, rows, c.Nodes[0].Addr(), "persistence", statusOK, "appendfsync always")
	want(t, rows, c.Nodes[1].Addr(), "persistence", statusWarn, "up to 1 s of grants")
	want(t, rows, c.Nodes[2].Addr(), "persistence", statusWarn, "snapshots only")
}

// TestDoctorACL: a user without EVALSHA fails the commands (and lock)
// checks naming it; one without PUBLISH warns; one without CONFIG warns
// that the config cannot be read. No password is ever printed.
func TestDoctorACL(t *testing.T) {
	c := redistest.Start(t, 3)
	const pw = "s3cret-pw-do-not-print"
	users := []string{"noevalsha", "nopublish", "noconfig"}
	denied := []string{"-evalsha", "-publish", "-config"}
	urls := make([]string, 3)
	for i, n := range c.Nodes {
		do(t, n, "ACL", "SETUSER", users[i], "on", ">"+pw, "~*", "&*", "+@all", denied[i])
		urls[i] = (&url.URL{Scheme: "redis", User: url.UserPassword(users[i], pw), Host: n.Addr()}).String()
	}
	code, rows, r := doctor(t, urls)
	require.Equal(t, exitDoctorFail, code, "exit")
	want(t, rows, c.Nodes[0].Addr(), "commands", statusFail, "user noevalsha may not run EVALSHA")
	want(t, rows, c.Nodes[0].Addr(), "lock", statusFail, "NOPERM")
	want(t, rows, c.Nodes[1].Addr(), "commands", statusWarn, "may not run PUBLISH")
	want(t, rows, c.Nodes[1].Addr(), "lock", statusOK, "")
	want(t, rows, c.Nodes[2].Addr(), "persistence", statusWarn, "cannot read config")
	want(t, rows, c.Nodes[2].Addr(), "commands", statusOK, "")
	table := mainOut("doctor", "--node-timeout", "1s", "--nodes", strings.Join(urls, ","))
	for _, out := range []string{r.stdout, r.stderr, table.stdout, table.stderr} {
		require.NotContains(t, out, pw, "the password is printed")
	}
	c.AssertNoKeys(t)
}

// TestDoctorACLNoTime: a user that may not call TIME fails the commands
// row naming it, and the fix asks for +time: fenced locks, read-write
// locks and elections call it in their acquire scripts (the fence's clock
// floor). The plain lock cycle still passes.
func TestDoctorACLNoTime(t *testing.T) {
	c := redistest.Start(t, 3)
	const pw = "pw"
	urls := make([]string, 3)
	for i, n := range c.Nodes {
		do(t, n, "ACL", "SETUSER", "notime", "on", ">"+pw, "~*", "&*", "+@all", "-time")
		urls[i] = (&url.URL{Scheme: "redis", User: url.UserPassword("notime", pw), Host: n.Addr()}).String()
	}
	code, rows, _ := doctor(t, urls)
	require.Equal(t, exitDoctorFail, code, "exit")
	for _, n := range c.Nodes {
		want(t, rows, n.Addr(), "commands", statusFail, "TIME in a script")
		want(t, rows, n.Addr(), "lock", statusOK, "")
	}
	for _, r := range rows {
		if r.Check == "commands" {
			require.Contains(t, r.Fix, "+time", "the fix names +time: %+v", r)
		}
	}
	c.AssertNoKeys(t)
}

// TestDoctorFrozen: a frozen node fails "reachable" within --timeout and
// is checked no further; the others are unaffected.
func TestDoctorFrozen(t *testing.T) {
	c := redistest.Start(t, 3)
	frozen := c.Nodes[2]
	require.NoError(t, frozen.Freeze())
	// 1 s: the live nodes' probes must fit in it too, on a loaded machine.
	code, rows, _ := doctor(t, c.URLs(), "--timeout", "1s")
	require.Equal(t, exitDoctorFail, code, "exit")
	want(t, rows, frozen.Addr(), "reachable", statusFail, "no answer within 1s")
	for _, r := range rows {
		if strings.Contains(r.Node, frozen.Addr()) {
			require.Equal(t, "reachable", r.Check, "an unreachable node was checked further: %+v", r)
		}
	}
	want(t, rows, c.Nodes[0].Addr(), "lock", statusOK, "")
	// Killed: the same finding.
	require.NoError(t, frozen.Kill())
	_, rows, _ = doctor(t, c.URLs())
	want(t, rows, frozen.Addr(), "reachable", statusFail, "refused")
}

// TestDoctorSetRows: the checks across nodes on synthetic facts: node
// counts, and clock offsets against the thresholds.
func TestDoctorSetRows(t *testing.T) {
	for n, status := range map[int]string{1: statusWarn, 2: statusWarn, 3: statusOK, 4: statusWarn, 5: statusOK} {
		r := quorumRow(n)
		assert.Equal(t, status, r.Status, "%d nodes (%s)", n, r.Detail)
	}
	for d, status := range map[time.Duration]string{
		0: statusOK, 90 * time.Millisecond: statusOK, -150 * time.Millisecond: statusWarn,
		900 * time.Millisecond: statusWarn, 1500 * time.Millisecond: statusFail, -2 * time.Second: statusFail,
	} {
		assert.Equal(t, status, clockStatus(d), "offset %v", d)
	}
	facts := []*nodeFacts{
		{name: "a", clockKnown: true, offset: -600 * time.Millisecond},
		{name: "b", clockKnown: true, offset: 10 * time.Millisecond},
		{name: "c", clockKnown: true, offset: 700 * time.Millisecond},
		{name: "d"},
	}
	r, ok := clockSpreadRow(facts)
	require.True(t, ok, "spread: no row")
	require.Equal(t, statusFail, r.Status, "spread: %+v", r)
	require.Contains(t, r.Detail, "1.3s between a and c", "spread")
	require.Contains(t, r.Detail, "not offsets", "spread")
	facts[2].offset = 20 * time.Millisecond
	facts[0].offset = 0
	r, _ = clockSpreadRow(facts)
	require.Equal(t, statusOK, r.Status, "spread 20ms: %+v", r)
}

// TestDoctorVersion: the version rules on INFO's fields (a real node of
// another version cannot be made at run time).
func TestDoctorVersion(t *testing.T) {
	for _, tc := range []struct{ version, mode, status string }{
		{"7.0.15", "standalone", statusOK},
		{"6.0.0", "standalone", statusOK},
		{"5.0.7", "standalone", statusWarn},
		{"2.8.24", "standalone", statusWarn},
		{"2.6.17", "standalone", statusFail},
		{"7.2.4", "sentinel", statusFail},
		{"7.2.4", "cluster", statusOK}, // a plain URL at it fails on the cluster row instead
		{"", "", statusWarn},
	} {
		f := &nodeFacts{name: "n"}
		checkVersion(f, tc.version, tc.mode)
		if assert.Len(t, f.rows, 1, "%s %s", tc.version, tc.mode) {
			assert.Equal(t, tc.status, f.rows[0].Status, "%s %s: %+v", tc.version, tc.mode, f.rows)
		}
	}
}
