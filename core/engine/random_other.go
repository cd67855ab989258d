//go:build !wasip1

package engine

import (
	"io"

	"github.com/google/uuid"
)

// newToken returns a lock token: a version-4 UUID (122 random bits) made by
// google/uuid from the engine's random source.
func newToken(env Env) string {
	u, err := uuid.NewRandomFromReader(envReader{env})
	if err != nil { // envReader never fails
		panic("liblock: token: " + err.Error())
	}
	return u.String()
}

type envReader struct{ env Env }

func (r envReader) Read(p []byte) (int, error) {
	r.env.Random(p)
	return len(p), nil
}

var _ io.Reader = envReader{}
