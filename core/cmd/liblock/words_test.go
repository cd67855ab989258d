package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/require"
)

// TestDoctorOutOfMemory: a node whose memory is full (maxmemory below what
// it uses, allkeys-lru with nothing to evict) refuses the lock's scripts
// with OOM: the lock row names the memory and its fix, not the commands
// row (an ACL's).
func TestDoctorOutOfMemory(t *testing.T) {
	c := redistest.Start(t, 1)
	n := c.Nodes[0]
	info, err := n.Do("INFO", "memory")
	require.NoError(t, err)
	used := parseInfo(info)["used_memory"]
	usedBytes, err := strconv.Atoi(used)
	require.NoError(t, err, "used_memory %q", used)
	do(t, n, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	do(t, n, "CONFIG", "SET", "maxmemory", strconv.Itoa(usedBytes/2))
	t.Cleanup(func() { _, _ = n.Do("CONFIG", "SET", "maxmemory", "0") })
	code, rows, _ := doctor(t, c.URLs())
	require.Equal(t, exitDoctorFail, code)
	lock := find(t, rows, n.Addr(), "lock")
	require.Equal(t, statusFail, lock.Status, "%+v", lock)
	require.Contains(t, lock.Detail, "OOM")
	require.Contains(t, lock.Detail, "maxmemory "+strconv.Itoa(usedBytes/2))
	require.Contains(t, lock.Fix, "out of memory")
	require.Contains(t, lock.Fix, "CONFIG SET maxmemory")
	require.NotContains(t, lock.Fix, "commands row")
	require.NotContains(t, lock.Detail, "liblock: ", "a doubled prefix")
	cmds := find(t, rows, n.Addr(), "commands")
	if cmds.Status == statusFail { // SET may still pass by evicting
		require.Contains(t, cmds.Fix, "out of memory", "%+v", cmds)
	}
	// The command says the same.
	r := liblock(t, nodesOf(c), "run", "--wait", "0", "job", "--", "true")
	require.Equal(t, exitUnavailable, r.code)
	require.Contains(t, r.stderr, "OOM")
	require.Contains(t, r.stderr, "fix: the node is out of memory")
	require.NotContains(t, r.stderr, ": liblock: ", "a doubled prefix")
}

// TestPasswordWords: a wrong password, a missing one and one the node does
// not have each get their own fix, saying how to write the URL, in doctor
// and in the command; no message doubles its prefix.
func TestPasswordWords(t *testing.T) {
	c := redistest.StartWith(t, 1, redistest.Options{Password: "sekret"})
	open := redistest.Start(t, 1)
	addr := c.Nodes[0].Addr()
	for _, tc := range []struct {
		url, says, fix, row string
	}{
		{"redis://:wrong@" + addr, "WRONGPASS", "redis://:PASSWORD@host:port for the node's requirepass password, redis://USER:PASSWORD@host:port for an ACL user", "reachable"},
		{"redis://" + addr, "NOAUTH", "the node requires a password and the URL has none: write redis://:PASSWORD@host:port", "reachable"},
		// go-redis (doctor's own probe) lets this one pass; liblock refuses it.
		{"redis://:sekret@" + open.Nodes[0].Addr(), "without any password configured", "the URL carries a password but the node has none", "lock"},
	} {
		_, rows, _ := doctor(t, []string{tc.url})
		r := find(t, rows, "127.0.0.1", tc.row)
		require.Equal(t, statusFail, r.Status, "%s: %+v", tc.url, r)
		require.Contains(t, r.Detail, tc.says, tc.url)
		require.Contains(t, r.Fix, tc.fix, tc.url)
		require.NotContains(t, r.Detail, "sekret", "the password in a row")
		for _, args := range [][]string{{"run", "--wait", "0", "job", "--", "true"}, {"inspect", "job"}, {"elect", "--wait", "0", "svc", "--value", "v", "--", "true"}} {
			res := liblock(t, tc.url, args...)
			require.Equal(t, exitUnavailable, res.code, "%s %q", tc.url, args)
			require.Contains(t, res.stderr, "\nfix: ", "%s %q", tc.url, args)
			require.Contains(t, res.stderr, tc.fix, "%s %q", tc.url, args)
			require.NotContains(t, res.stderr, ": liblock: ", "%s %q: a doubled prefix", tc.url, args)
			require.NotContains(t, res.stderr, "sekret", "the password on stderr")
		}
	}
}

// TestURLTypoWords: a mistyped scheme gets a suggestion that is a valid
// URL, never redis://redis//...; and no doubled prefix.
func TestURLTypoWords(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis//127.0.0.1:7001", "write redis://127.0.0.1:7001 "},
		{"redis:/127.0.0.1:7001", "write redis://127.0.0.1:7001 "},
		{"127.0.0.1:7001", "write redis://127.0.0.1:7001 "},
	} {
		for _, cmd := range []string{"doctor", "run", "inspect"} {
			args := []string{cmd, "--nodes", tc.url}
			if cmd != "doctor" {
				args = append(args, "job")
			}
			if cmd == "run" {
				args = append(args, "--", "true")
			}
			r := mainOut(args...)
			require.Equal(t, exitUsage, r.code, "%q: %s", args, r.stderr)
			require.Contains(t, r.stderr, "liblock "+cmd+": --nodes: ", "%q", args)
			require.Contains(t, r.stderr, tc.want, "%q", args)
			require.NotContains(t, r.stderr, "redis://redis", "%q", args)
			require.NotContains(t, r.stderr, ": liblock: ", "%q: a doubled prefix", args)
		}
	}
}

// TestNoDoubledPrefix: the library's errors appear without their own
// "liblock: " after the command's "liblock CMD: ".
func TestNoDoubledPrefix(t *testing.T) {
	c := redistest.Start(t, 3)
	for _, n := range c.Nodes[:2] {
		require.NoError(t, n.Kill())
	}
	for _, args := range [][]string{
		{"run", "--wait", "0", "job", "--", "true"},
		{"inspect", "job"},
		{"release", "--token", "t", "job"},
		{"run", "--node-timeout", "1h", "job", "--", "true"},
	} {
		r := liblock(t, nodesOf(c), args...)
		require.NotZero(t, r.code, "%q", args)
		require.True(t, strings.HasPrefix(r.stderr, "liblock "+args[0]+": "), "%q: %s", args, r.stderr)
		require.NotContains(t, r.stderr, ": liblock: ", "%q: a doubled prefix", args)
	}
}
