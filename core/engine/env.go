package engine

import time "github.com/liblock/liblock/core/internal/xtime"

// Env is the engine's one seam to the outside world: a monotonic clock and
// a source of randomness. SystemEnv is the real one; the simulation drives
// the engine with its own.
type Env interface {
	// Now is a monotonic time: the time since some fixed origin.
	Now() time.Duration
	// Random fills p with cryptographically secure random bytes.
	Random(p []byte)
}

// SystemEnv returns the process's monotonic clock and its secure random
// source (crypto/rand natively, WASI random_get in the wasm module).
func SystemEnv() Env { return systemEnv{} }

type systemEnv struct{}

var origin = time.Now()

func (systemEnv) Now() time.Duration { return time.Since(origin) }
func (systemEnv) Random(p []byte)    { randomBytes(p) }
