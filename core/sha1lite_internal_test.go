package core

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"
)

// TestSHA1LiteMatchesCryptoSHA1: the wasip1 build names the scripts with
// sha1Hex; it must give crypto/sha1's digests.
func TestSHA1LiteMatchesCryptoSHA1(t *testing.T) {
	inputs := []string{releaseScript.src, extendScript.src, strings.Repeat("\xff", 1000)}
	for n := 0; n < 200; n++ {
		inputs = append(inputs, strings.Repeat("a", n))
	}
	for _, s := range inputs {
		sum := sha1.Sum([]byte(s))
		if got, want := sha1Hex(s), hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("sha1Hex(%q) = %s, want %s", s, got, want)
		}
	}
}
