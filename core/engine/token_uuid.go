//go:build !wasip1

package engine

import (
	"io"

	"github.com/google/uuid"
)

// tokenSource is the Env as google/uuid's reader.
type tokenSource = io.Reader

// tokenUUID draws a token's UUID with google/uuid (version 4, from the
// engine's random source): the native build uses the well-kept library.
// liblock.wasm formats its own (token_wasip1.go): google/uuid would bring
// fmt, reflect and crypto/rand's DRBG into the module (measured: 933 KB).
func (e *Engine) tokenUUID(u *[16]byte) {
	if e.tokenSrc == nil {
		e.tokenSrc = envReader{e.env}
	}
	v, err := uuid.NewRandomFromReader(e.tokenSrc)
	if err != nil { // envReader never fails
		panic("liblock: token: " + err.Error())
	}
	*u = v
}

// envReader reads an Env's random source.
type envReader struct{ env Env }

func (r envReader) Read(p []byte) (int, error) {
	r.env.Random(p)
	return len(p), nil
}
