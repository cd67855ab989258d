package core_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/core/testkit/tlstest"
)

// TestTLS: Config.TLS (private CA, mutual TLS, ServerName) on rediss://
// nodes, against TLS-only redis-servers.
func TestTLS(t *testing.T) { tlstest.Run(t, core.New) }

// NewFromClients takes each go-redis client's TLSConfig: a Config.TLS
// beside them is refused rather than silently ignored.
func TestTLSWithClientsRefused(t *testing.T) {
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rc.Close()
	_, err := core.NewFromClients(core.Config{TLS: &tls.Config{}}, rc)
	var ae *core.ArgumentError
	if !errors.As(err, &ae) || ae.Arg != "tls" {
		t.Fatalf("got %v, want an ArgumentError for tls", err)
	}
}

// TestTLSPerNodeFromClients: NewFromClients dials each rediss node with its
// own go-redis client's TLSConfig, so nodes whose certificates come from
// different private CAs sit in one Client beside a plain node.
func TestTLSPerNodeFromClients(t *testing.T) {
	c := tlstest.Make(t)
	a := c.Start(t, c.Server, c.ServerKey, false) // from CA
	b := c.Start(t, c.Other, c.OtherKey, false)   // from OtherCA
	plain := redistest.Start(t, 1).Nodes[0]
	ca, other := tlstest.Pool(t, c.CA), tlstest.Pool(t, c.OtherCA)
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	clients := func(caA, caB *x509.CertPool) []*redis.Client {
		rs := []*redis.Client{
			redis.NewClient(&redis.Options{Addr: addr(a), TLSConfig: &tls.Config{RootCAs: caA}}),
			redis.NewClient(&redis.Options{Addr: addr(b), TLSConfig: &tls.Config{RootCAs: caB}}),
			redis.NewClient(&redis.Options{Addr: plain.Addr()}),
		}
		t.Cleanup(func() {
			for _, r := range rs {
				r.Close()
			}
		})
		return rs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("each node its own CA", func(t *testing.T) {
		rs := clients(ca, other)
		cl, err := core.NewFromClients(core.Config{NodeTimeout: 2 * time.Second}, rs...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		lock, err := cl.Acquire(ctx, "tls:pernode", 10*time.Second)
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		for i, r := range rs { // the key is on every node
			if n, err := r.Exists(ctx, lock.Key()).Result(); err != nil || n != 1 {
				t.Fatalf("node %d: EXISTS %s = %d, %v; want 1", i, lock.Key(), n, err)
			}
		}
		if err := lock.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("one CA for both TLS nodes", func(t *testing.T) {
		cl, err := core.NewFromClients(core.Config{NodeTimeout: 2 * time.Second}, clients(ca, ca)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		lock, err := cl.Acquire(ctx, "tls:onece", 10*time.Second) // 2 of 3: a quorum
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		defer lock.Release(ctx)
		in, err := cl.Inspect(ctx, "tls:onece")
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range in.Nodes {
			if i == 1 {
				if n.Err == nil || !strings.Contains(n.Err.Error(), "certificate signed by unknown authority") {
					t.Fatalf("node 1: err %v, want its verification failure", n.Err)
				}
			} else if n.Err != nil || !n.Holder {
				t.Fatalf("node %d: %+v, want the holder's key", i, n)
			}
		}
	})
	t.Run("the CAs swapped", func(t *testing.T) {
		cl, err := core.NewFromClients(core.Config{NodeTimeout: 2 * time.Second}, clients(other, ca)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		_, err = cl.Acquire(ctx, "tls:swapped", 10*time.Second)
		var ue *core.UnavailableError
		if !errors.As(err, &ue) || len(ue.Nodes) != 2 {
			t.Fatalf("Acquire: got %v, want ErrUnavailable from the two TLS nodes", err)
		}
		for _, ne := range ue.Nodes {
			if !strings.Contains(ne.Error(), "certificate signed by unknown authority") {
				t.Fatalf("node cause %q, want a verification failure", ne.Error())
			}
		}
	})
}

// TestTLSNodeTLS: Config.NodeTLS replaces Config.TLS for the nodes it names
// (two private CAs and a plain node in one Client).
func TestTLSNodeTLS(t *testing.T) { tlstest.RunNodeTLS(t, core.New) }
