package tlstest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
)

// NewClient makes a Client of a Config: core.New, or wasm/host's
// Module.NewClient.
type NewClient func(core.Config) (*core.Client, error)

// Pool returns a cert pool of the PEM file path.
func Pool(tb testing.TB, path string) *x509.CertPool {
	tb.Helper()
	pem, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		tb.Fatalf("tlstest: no certificate in %s", path)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	ca, other := Pool(t, c.CA), Pool(t, c.OtherCA)
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
			cl, err := newClient(core.Config{Nodes: []string{k.node}, NodeTimeout: 2 * time.Second, TLS: k.tls})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			lock, err := cl.Acquire(ctx, "tls:"+k.name, 10*time.Second)
			if k.cause == "" {
				if err != nil {
					t.Fatalf("Acquire: %v", err)
				}
				if err := lock.Release(ctx); err != nil {
					t.Fatalf("Release: %v", err)
				}
			} else {
				var ue *core.UnavailableError
				if !errors.Is(err, core.ErrUnavailable) || !errors.As(err, &ue) || len(ue.Nodes) != 1 {
					t.Fatalf("Acquire: got %v, want ErrUnavailable with the node's cause", err)
				}
				if !strings.Contains(ue.Nodes[0].Error(), k.cause) {
					t.Fatalf("node cause %q, want it to say %q", ue.Nodes[0].Error(), k.cause)
				}
			}
			// The Client's connections are clones: the caller's config is untouched.
			if k.tls != nil && (k.tls.ServerName != base.ServerName || k.tls.InsecureSkipVerify != base.InsecureSkipVerify) {
				t.Fatalf("Config.TLS was modified: %+v", k.tls)
			}
		})
	}
}
