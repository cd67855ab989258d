package abi

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// The hand-written byte order matches encoding/binary's.
func TestByteOrderMatchesEncodingBinary(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xff, 0x1234, 0xdeadbeef, 0x0102030405060708, 1<<64 - 1} {
		if got, want := appendBE16([]byte{9}, uint16(v)), binary.BigEndian.AppendUint16([]byte{9}, uint16(v)); !bytes.Equal(got, want) {
			t.Errorf("appendBE16(%#x) = % x, want % x", v, got, want)
		}
		if got, want := appendBE32(nil, uint32(v)), binary.BigEndian.AppendUint32(nil, uint32(v)); !bytes.Equal(got, want) {
			t.Errorf("appendBE32(%#x) = % x, want % x", v, got, want)
		}
		if got, want := appendBE64(nil, v), binary.BigEndian.AppendUint64(nil, v); !bytes.Equal(got, want) {
			t.Errorf("appendBE64(%#x) = % x, want % x", v, got, want)
		}
		var got, want [8]byte
		PutLE64(got[:], v)
		binary.LittleEndian.PutUint64(want[:], v)
		if got != want || le64(got[:]) != v {
			t.Errorf("putLE64/le64(%#x): % x, want % x", v, got, want)
		}
		PutLE32(got[:], uint32(v))
		binary.LittleEndian.PutUint32(want[:], uint32(v))
		if got != want || le32(got[:]) != uint32(v) {
			t.Errorf("putLE32/le32(%#x): % x, want % x", v, got, want)
		}
	}
}
