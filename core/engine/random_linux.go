//go:build linux && !wasip1

package engine

import (
	"crypto/rand"

	"golang.org/x/sys/unix"
)

// randomBytes fills p from the kernel's CSPRNG with the getrandom system
// call itself — the source crypto/rand reads — rather than through
// crypto/rand, which since Go 1.24 calls the vDSO's getrandom: valgrind
// cannot see that one write the buffer, and flags every byte of a token
// (and whatever it is copied into) as uninitialised, which would hide real
// errors in the C ABI's memory checks (make test-c). golang.org/x/sys was
// already in the module graph (go-redis); it is direct now.
func randomBytes(p []byte) {
	for len(p) > 0 {
		n, err := unix.Getrandom(p, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			_, _ = rand.Read(p) // never fails (Go ≥ 1.24)
			return
		}
		p = p[n:]
	}
}
