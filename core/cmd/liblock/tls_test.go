package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/liblock/liblock/core/testkit/tlstest"
	"github.com/stretchr/testify/require"
)

// TestTLSFlags: against a mutual-TLS node (a private CA, client
// certificates required), doctor without the TLS settings fails the node
// and names the fix; with --tls-ca-file, --tls-cert-file, --tls-key-file it
// passes a healthy server; run locks through it with the settings in
// LIBLOCK_TLS_* instead; elect and inspect take them too.
func TestTLSFlags(t *testing.T) {
	certs := tlstest.Make(t)
	port := certs.Start(t, certs.Server, certs.ServerKey, true)
	url := "rediss://127.0.0.1:" + strconv.Itoa(port)
	// A node timeout above a loaded machine's TLS handshakes (the default
	// 50 ms is not what is tested here).
	flags := []string{"--node-timeout", "2s", "--tls-ca-file", certs.CA, "--tls-cert-file", certs.Client, "--tls-key-file", certs.ClientKey}
	env := []string{"LIBLOCK_TLS_CA_FILE=" + certs.CA, "LIBLOCK_TLS_CERT_FILE=" + certs.Client, "LIBLOCK_TLS_KEY_FILE=" + certs.ClientKey}

	// No settings: the system's roots do not know the private CA.
	code, rows, _ := doctor(t, []string{url})
	require.Equal(t, exitDoctorFail, code)
	r := find(t, rows, "127.0.0.1", "reachable")
	require.Equal(t, statusFail, r.Status, "%+v", r)
	require.Contains(t, r.Fix, "--tls-ca-file")
	// The CA alone: the server wants a client certificate.
	_, rows, _ = doctor(t, []string{url}, "--tls-ca-file", certs.CA)
	r = find(t, rows, "127.0.0.1", "reachable")
	require.Equal(t, statusFail, r.Status, "%+v", r)
	require.Contains(t, r.Fix, "--tls-cert-file")
	// Everything: a healthy node (persistence and the single node warn).
	code, rows, _ = doctor(t, []string{url}, flags...)
	require.Zero(t, code, "exit: %+v", rows)
	for _, check := range []string{"reachable", "version", "role", "eviction", "commands", "lock"} {
		want(t, rows, "127.0.0.1", check, statusOK, "")
	}

	// run with the environment variables, inspect and elect with the flags.
	dir := t.TempDir()
	cmd, out, errb := command(url, "run", "--node-timeout", "2s", "job", "--", "sh", "-c", `echo "$LIBLOCK_TOKEN" > token`)
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	res := wait(t, cmd, out, errb)
	require.Zero(t, res.code, "run through mutual TLS: %s", res.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "token"))
	require.NoError(t, err)
	require.Len(t, strings.TrimSpace(string(b)), 36, "the command ran holding the lock")
	res = liblock(t, url, append([]string{"inspect"}, append(flags, "job")...)...)
	require.Zero(t, res.code, "inspect: %s", res.stderr)
	res = liblock(t, url, append([]string{"elect"}, append(flags, "svc", "--value", "v", "--", "true")...)...)
	require.Zero(t, res.code, "elect: %s", res.stderr)
	// Without them, run fails with the fix named.
	res = liblock(t, url, "run", "--wait", "0", "--node-timeout", "5s", "job", "--", "true")
	require.Equal(t, exitUnavailable, res.code)
	require.Contains(t, res.stderr, "fix: ")
	require.Contains(t, res.stderr, "--tls-ca-file")
}

// TestTLSServerName: a certificate for redis.internal verifies with
// --tls-server-name redis.internal (LIBLOCK_TLS_SERVER_NAME), not without.
func TestTLSServerName(t *testing.T) {
	certs := tlstest.Make(t)
	port := certs.Start(t, certs.Internal, certs.InternalKey, false)
	url := "rediss://127.0.0.1:" + strconv.Itoa(port)
	_, rows, _ := doctor(t, []string{url}, "--tls-ca-file", certs.CA)
	r := find(t, rows, "127.0.0.1", "reachable")
	require.Equal(t, statusFail, r.Status, "%+v", r)
	require.Contains(t, r.Fix, "--tls-server-name")
	code, rows, _ := doctor(t, []string{url}, "--tls-ca-file", certs.CA, "--tls-server-name", "redis.internal")
	require.Zero(t, code, "%+v", rows)
	cmd, out, errb := command(url, "run", "--node-timeout", "2s", "job", "--", "true")
	cmd.Env = append(cmd.Env, "LIBLOCK_TLS_CA_FILE="+certs.CA, "LIBLOCK_TLS_SERVER_NAME=redis.internal")
	require.NoError(t, cmd.Start())
	require.Zero(t, wait(t, cmd, out, errb).code)
}

// TestTLSBadFiles: a bad TLS setting is a usage error (64) naming its flag
// or variable, before any node is contacted.
func TestTLSBadFiles(t *testing.T) {
	certs := tlstest.Make(t)
	missing := filepath.Join(t.TempDir(), "none.pem")
	for _, tc := range []struct {
		args []string
		env  []string
		says string
	}{
		{[]string{"--tls-ca-file", missing}, nil, "--tls-ca-file: cannot read"},
		{[]string{"--tls-ca-file", certs.Garbage}, nil, "--tls-ca-file: no PEM certificate"},
		{[]string{"--tls-cert-file", certs.Client}, nil, "--tls-cert-file: needs --tls-key-file"},
		{[]string{"--tls-key-file", certs.ClientKey}, nil, "--tls-key-file: needs --tls-cert-file"},
		{[]string{"--tls-cert-file", certs.Client, "--tls-key-file", certs.OtherKey}, nil, "--tls-key-file: does not match --tls-cert-file"},
		{nil, []string{"LIBLOCK_TLS_CA_FILE=" + missing}, "LIBLOCK_TLS_CA_FILE: cannot read"},
	} {
		for _, sub := range []string{"doctor", "run", "inspect"} {
			args := append([]string{sub, "--nodes", "rediss://127.0.0.1:1"}, tc.args...)
			if sub != "doctor" {
				args = append(args, "job")
			}
			if sub == "run" {
				args = append(args, "--", "true")
			}
			cmd, out, errb := command("", args...)
			cmd.Env = append(cmd.Env, tc.env...)
			require.NoError(t, cmd.Start())
			r := wait(t, cmd, out, errb)
			require.Equal(t, exitUsage, r.code, "%q %q", args, tc.env)
			require.Contains(t, r.stderr, "liblock "+sub+": "+tc.says, "%q %q", args, tc.env)
		}
	}
}
