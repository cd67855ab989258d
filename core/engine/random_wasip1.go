//go:build wasip1

package engine

import "syscall"

// randomBytes reads WASI's random_get, the source crypto/rand reads on
// wasip1 too: crypto/rand itself would bring its FIPS DRBG (AES, SHA-2,
// SHA-3) into liblock.wasm, about 200 KB.
func randomBytes(p []byte) {
	if err := syscall.RandomGet(p); err != nil {
		panic("liblock: random_get: " + err.Error()) // crypto/rand would crash too
	}
}

// newToken returns a lock token: a version-4 UUID (122 random bits),
// formatted as google/uuid formats one. google/uuid itself is not linked
// here: measured, it made liblock.wasm 933 KB larger (3,687,509 bytes
// against 2,754,008 after wasm-opt), as it brings fmt, reflect and
// crypto/rand's DRBG.
func newToken(env Env) string {
	var u [16]byte
	env.Random(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10
	const hex = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hex[c>>4], hex[c&0xf]
		j += 2
	}
	return string(b[:])
}
