package host_test

import (
	"testing"

	"github.com/liblock/liblock/core/testkit/tlstest"
)

// TestTLS: core.Config.TLS over liblock.wasm's engine (the Go driver dials).
func TestTLS(t *testing.T) { tlstest.Run(t, mod.NewClient) }

// TestTLSNodeTLS: core.Config.NodeTLS over liblock.wasm's engine.
func TestTLSNodeTLS(t *testing.T) { tlstest.RunNodeTLS(t, mod.NewClient) }
