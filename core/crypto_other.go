//go:build !wasip1

package core

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
)

// newToken returns a lock token: 26 characters, 128 random bits.
func newToken() string { return rand.Text() }

// scriptSHA1 is the hex SHA-1 of a script, the name EVALSHA runs it by.
func scriptSHA1(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}
