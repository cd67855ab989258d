package host_test

import (
	"testing"

	"github.com/liblock/liblock/core/testkit/tlstest"
)

// TestTLS: core.Config.TLS over liblock.wasm's engine (the Go driver dials).
func TestTLS(t *testing.T) { tlstest.Run(t, mod.NewClient) }

// TestTLSCluster: a rediss:// cluster=yes node on a Redis Cluster that
// runs over TLS (MOVED names TLS ports).
func TestTLSCluster(t *testing.T) { tlstest.RunCluster(t, mod.NewClient) }

// TestTLSNodeTLS: core.Config.NodeTLS over liblock.wasm's engine.
func TestTLSNodeTLS(t *testing.T) { tlstest.RunNodeTLS(t, mod.NewClient) }
