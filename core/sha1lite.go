package core

// sha1Hex is the hex SHA-1 of s (RFC 3174), for the wasip1 build, where
// crypto/sha1 would bring crypto/internal/fips140only and with it the FIPS
// DRBG, AES, SHA-2 and SHA-3. It names the Lua scripts for EVALSHA: not a
// security use. sha1lite_internal_test.go checks it against crypto/sha1.
func sha1Hex(s string) string {
	h := [5]uint32{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0}
	msg := make([]byte, 0, len(s)+72)
	msg = append(msg, s...)
	msg = append(msg, 0x80)
	for len(msg)%64 != 56 {
		msg = append(msg, 0)
	}
	bits := uint64(len(s)) * 8 // big-endian by hand: encoding/binary imports reflect
	for shift := 56; shift >= 0; shift -= 8 {
		msg = append(msg, byte(bits>>shift))
	}
	var w [80]uint32
	for ; len(msg) > 0; msg = msg[64:] {
		for i := 0; i < 16; i++ {
			w[i] = uint32(msg[4*i])<<24 | uint32(msg[4*i+1])<<16 | uint32(msg[4*i+2])<<8 | uint32(msg[4*i+3])
		}
		for i := 16; i < 80; i++ {
			x := w[i-3] ^ w[i-8] ^ w[i-14] ^ w[i-16]
			w[i] = x<<1 | x>>31
		}
		a, b, c, d, e := h[0], h[1], h[2], h[3], h[4]
		for i := 0; i < 80; i++ {
			var f, k uint32
			switch {
			case i < 20:
				f, k = b&c|^b&d, 0x5A827999
			case i < 40:
				f, k = b^c^d, 0x6ED9EBA1
			case i < 60:
				f, k = b&c|b&d|c&d, 0x8F1BBCDC
			default:
				f, k = b^c^d, 0xCA62C1D6
			}
			a, b, c, d, e = (a<<5|a>>27)+f+e+k+w[i], a, b<<30|b>>2, c, d
		}
		h[0], h[1], h[2], h[3], h[4] = h[0]+a, h[1]+b, h[2]+c, h[3]+d, h[4]+e
	}
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 40)
	for _, v := range h {
		for shift := 28; shift >= 0; shift -= 4 {
			out = append(out, digits[v>>shift&15])
		}
	}
	return string(out)
}
