package core_test

import (
	"testing"

	"github.com/liblock/liblock/core/locktest"
)

// TestBehaviour runs the shared behaviour suite against the native core.
func TestBehaviour(t *testing.T) {
	locktest.Run(t, locktest.Native)
}
