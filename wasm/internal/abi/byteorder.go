package abi

// Byte order by hand rather than encoding/binary, which imports reflect (for
// binary.Read/Write): the module keeps reflect out of its imports so that a
// test can guard it (wasm/host's TestModuleLinksNoFmt, wasm/README.md).

func appendBE16(b []byte, v uint16) []byte { return append(b, byte(v>>8), byte(v)) }

func appendBE32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func appendBE64(b []byte, v uint64) []byte {
	return appendBE32(appendBE32(b, uint32(v>>32)), uint32(v))
}

// PutLE32 stores v little-endian in b[0:4] (encoding/binary would link reflect).
func PutLE32(b []byte, v uint32) {
	_ = b[3] // one bounds check
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// PutLE64 stores v little-endian in b[0:8].
func PutLE64(b []byte, v uint64) {
	PutLE32(b[4:8], uint32(v>>32))
	PutLE32(b[0:4], uint32(v))
}

func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 { return uint64(le32(b[0:4])) | uint64(le32(b[4:8]))<<32 }
