//go:build wasip1

package main

// Little-endian stores by hand rather than encoding/binary, which imports
// reflect: the module keeps reflect (and fmt) out of its imports for size
// (wasm/README.md).

func putLE32(b []byte, v uint32) {
	_ = b[3] // one bounds check
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func putLE64(b []byte, v uint64) {
	putLE32(b[4:8], uint32(v>>32))
	putLE32(b[0:4], uint32(v))
}
