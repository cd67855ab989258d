package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUsage: every bad command line is 64 with a message naming what is
// wrong; nothing is sent anywhere (the nodes do not exist).
func TestUsage(t *testing.T) {
	const nodes = "redis://127.0.0.1:1"
	for _, tc := range []struct {
		args  []string
		nodes string
		says  string
	}{
		{[]string{}, nodes, "Usage"},
		{[]string{"frobnicate"}, nodes, "unknown command"},
		{[]string{"run", "--", "true"}, nodes, "missing NAME"},
		{[]string{"run", "job", "true"}, nodes, "missing --"},
		{[]string{"run", "job", "--"}, nodes, "no command after --"},
		{[]string{"run", "a", "b", "--", "true"}, nodes, "one NAME"},
		{[]string{"run", "--ttl", "30", "job", "--", "true"}, nodes, "--ttl: \"30\" has no unit: add one, e.g. 30s or 30ms"},
		{[]string{"run", "--wait", "1.5", "job", "--", "true"}, nodes, "--wait"},
		{[]string{"run", "--grace", "5", "job", "--", "true"}, nodes, "--grace"},
		{[]string{"run", "--wait", "-1s", "job", "--", "true"}, nodes, "--wait"},
		{[]string{"run", "--ttl", "soon", "job", "--", "true"}, nodes, "--ttl"},
		{[]string{"run", "--node-timeout", "2m", "job", "--", "true"}, nodes, "--node-timeout"},
		{[]string{"run", "--bogus", "job", "--", "true"}, nodes, "unknown flag --bogus"},
		{[]string{"run", "--owner", "a/b", "job", "--", "true"}, nodes, "--owner"},
		{[]string{"run", "--nodes", ",", "job", "--", "true"}, nodes, "--nodes"},
		{[]string{"run", "--nodes", "127.0.0.1:6379", "job", "--", "true"}, "", "--nodes"},
		{[]string{"run", "job", "--", "true"}, "", "no nodes: pass --nodes"},
		{[]string{"run", "--ttl", "0s", "job", "--", "true"}, nodes, "--ttl"},
		{[]string{"inspect"}, nodes, "missing NAME"},
		{[]string{"inspect", "--json=maybe", "x"}, nodes, "--json"},
		{[]string{"release", "job"}, nodes, "--token"},
		{[]string{"release", "--token", "short", "job"}, nodes, "--token"},
		{[]string{"release", "--token", "a-long-enough-token-0001"}, nodes, "one NAME"},
		{[]string{"doctor", "--timeout", "2"}, nodes, "--timeout"},
		{[]string{"doctor", "extra"}, nodes, "no arguments"},
		{[]string{"doctor"}, "", "no nodes"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Setenv("LIBLOCK_NODES", tc.nodes)
			r := mainOut(tc.args...)
			require.Equal(t, exitUsage, r.code, "exit; stderr %q", r.stderr)
			require.Contains(t, r.stderr, tc.says)
		})
	}
}

// TestHelp: --help of liblock and of every command is exit 0 on stdout,
// with the exit-code table on the top one.
func TestHelp(t *testing.T) {
	r := mainOut("--help")
	require.Zero(t, r.code, "liblock --help: exit")
	for _, want := range []string{"Exit codes", "64", "65", "69", "70", "71", "126", "127", "128+S"} {
		require.Contains(t, r.stdout, want, "liblock --help")
	}
	for _, cmd := range []string{"run", "inspect", "release", "doctor"} {
		r := mainOut(cmd, "--help")
		require.Zero(t, r.code, "%s --help: exit\n%s%s", cmd, r.stdout, r.stderr)
		require.Contains(t, r.stdout, "Usage: liblock "+cmd, "%s --help", cmd)
		require.Contains(t, r.stdout, "-nodes", "%s --help", cmd)
	}
	r = mainOut("version")
	require.Zero(t, r.code, "version: exit")
	require.True(t, strings.HasPrefix(r.stdout, "liblock "), "version: %q", r.stdout)
}
