package tlstest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/stretchr/testify/require"
)

// NewClient makes a Client of a Config: core.New, or wasm/host's
// Module.NewClient.
type NewClient func(core.Config) (*core.Client, error)

// Pool returns a cert pool of the PEM file path.
func Pool(tb testing.TB, path string) *x509.CertPool {
	tb.Helper()
	pem, err := os.ReadFile(path)
	require.NoError(tb, err)
	p := x509.NewCertPool()
	require.True(tb, p.AppendCertsFromPEM(pem), "tlstest: no certificate in %s", path)
	return p
}

// Run runs the TLS cases of Config.TLS against TLS-only redis-servers: a
// private CA verifies, the system roots and an unrelated CA do not, mutual
// TLS with and without a client certificate, a ServerName override, and
// skip_verify=true.
func Run(t *testing.T, newClient NewClient) {
	c := Make(t)
	plain := c.Start(t, c.Server, c.ServerKey, false)
	mutual := c.Start(t, c.Server, c.ServerKey, true)
	internal := c.Start(t, c.Internal, c.InternalKey, false)
	clientCert, err := tls.LoadX509KeyPair(c.Client, c.ClientKey)
	require.NoError(t, err)
	ca, other := Pool(t, c.CA), Pool(t, c.OtherCA)
	// The system roots are read once per process, at the first handshake
	// that needs them: read here, so that a case's node timeout is not
	// spent on it (under -race on a busy machine it can be).
	_, err = x509.SystemCertPool()
	require.NoError(t, err)
	url := func(port int, q string) string { return "rediss://127.0.0.1:" + strconv.Itoa(port) + q }
	type tc struct {
		name  string
		node  string
		tls   *tls.Config
		cause string // "": the lock is taken
	}
	cases := []tc{
		{"private CA verifies", url(plain, ""), &tls.Config{RootCAs: ca}, ""},
		{"system roots do not", url(plain, ""), nil, "certificate signed by unknown authority"},
		{"an unrelated CA does not", url(plain, ""), &tls.Config{RootCAs: other}, "certificate signed by unknown authority"},
		{"mutual TLS with the client certificate", url(mutual, ""), &tls.Config{RootCAs: ca, Certificates: []tls.Certificate{clientCert}}, ""},
		{"mutual TLS without a client certificate", url(mutual, ""), &tls.Config{RootCAs: ca}, "certificate required"},
		{"ServerName verifies redis.internal at 127.0.0.1", url(internal, ""), &tls.Config{RootCAs: ca, ServerName: "redis.internal"}, ""},
		{"without ServerName the host name does not match", url(internal, ""), &tls.Config{RootCAs: ca}, "doesn't contain any IP SANs"},
		{"skip_verify=true still turns verification off", url(plain, "?skip_verify=true"), nil, ""},
		{"skip_verify=true over a base config", url(plain, "?skip_verify=true"), &tls.Config{RootCAs: other}, ""},
	}
	for _, k := range cases {
		t.Run(k.name, func(t *testing.T) {
			var base *tls.Config
			if k.tls != nil {
				base = k.tls.Clone()
			}
			// 5 s: each case checks a handshake's outcome and its cause, not
			// its speed; a loaded machine took more than 2 s once.
			cl, err := newClient(core.Config{Nodes: []string{k.node}, NodeTimeout: 5 * time.Second, TLS: k.tls})
			require.NoError(t, err)
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			lock, err := cl.Acquire(ctx, "tls:"+k.name, 10*time.Second)
			if k.cause == "" {
				require.NoError(t, err, "Acquire")
				require.NoError(t, lock.Release(ctx), "Release")
			} else {
				var ue *core.UnavailableError
				require.ErrorIs(t, err, core.ErrUnavailable, "Acquire")
				require.ErrorAs(t, err, &ue, "Acquire")
				require.Len(t, ue.Nodes, 1, "want the node's cause in %v", err)
				require.Contains(t, ue.Nodes[0].Error(), k.cause, "the node's cause")
			}
			// The Client's connections are clones: the caller's config is untouched.
			if k.tls != nil {
				require.Equal(t, base.ServerName, k.tls.ServerName, "Config.TLS was modified: %+v", k.tls)
				require.Equal(t, base.InsecureSkipVerify, k.tls.InsecureSkipVerify, "Config.TLS was modified: %+v", k.tls)
			}
		})
	}
}
