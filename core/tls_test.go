package core_test

import (
	"crypto/tls"
	"errors"

	"github.com/redis/go-redis/v9"
	"testing"

	"github.com/liblock/liblock/core"
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
