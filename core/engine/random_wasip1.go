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
