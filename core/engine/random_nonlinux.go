//go:build !linux && !wasip1

package engine

import "crypto/rand"

func randomBytes(p []byte) { _, _ = rand.Read(p) } // crypto/rand.Read never fails (Go ≥ 1.24)
