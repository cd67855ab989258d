//go:build wasip1

package engine

import (
	"strconv"
	"unsafe"
)

// randomBytes reads WASI's random_get, the source crypto/rand reads on
// wasip1 too: crypto/rand itself would bring its FIPS DRBG (AES, SHA-2,
// SHA-3) into liblock.wasm, about 200 KB. It imports random_get itself
// rather than call syscall.RandomGet: package syscall, whose init reads
// the environment and the preopened directories, would cost the module
// ≈ 18 KB for this one call.
func randomBytes(p []byte) {
	if len(p) == 0 {
		return
	}
	if errno := randomGet(unsafe.Pointer(unsafe.SliceData(p)), uint32(len(p))); errno != 0 {
		panic("liblock: random_get: errno " + strconv.Itoa(int(errno))) // crypto/rand would crash too
	}
}

// randomGet fills buf[:n] with random bytes; 0, or a WASI errno.
//
//go:wasmimport wasi_snapshot_preview1 random_get
//go:noescape
func randomGet(buf unsafe.Pointer, n uint32) uint32

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
