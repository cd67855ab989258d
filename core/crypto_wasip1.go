//go:build wasip1

package core

import "syscall"

// newToken returns a lock token: 26 characters, 128 random bits, made as
// crypto/rand.Text makes them, from WASI's random_get, the source
// crypto/rand reads on wasip1 too. crypto/rand itself would bring its FIPS
// DRBG (AES, SHA-2, SHA-3) into liblock.wasm: about 200 KB with crypto/sha1.
func newToken() string {
	const base32alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	src := make([]byte, 26)
	if err := syscall.RandomGet(src); err != nil {
		panic("liblock: random_get: " + err.Error()) // crypto/rand would crash too
	}
	for i := range src {
		src[i] = base32alphabet[src[i]%32]
	}
	return string(src)
}

// scriptSHA1 is the hex SHA-1 of a script, the name EVALSHA runs it by.
func scriptSHA1(src string) string { return sha1Hex(src) }
