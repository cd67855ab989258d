package nodeurl

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

func TestASCIIHelpers(t *testing.T) {
	// Plain checks in these loops: over every rune, a testify call per
	// value would cost more than the test itself.
	for r := rune(-1); r <= unicode.MaxRune+1; r++ {
		if isSpace(r) != unicode.IsSpace(r) {
			t.Errorf("isSpace(%U) = %v, unicode.IsSpace: %v", r, isSpace(r), unicode.IsSpace(r))
		}
	}
	corpus := []string{"", " ", "\t\n\v\f\r ", "\u0085\u00a0", "\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000",
		"\u200b", "\ufeff", " x ", "\xff", " \xc2", " \xc2\xa0", "\xe3\x80", "/tmp/redis.sock", "%20"}
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{" ", "\t", "\u00a0", "\u3000", "\u2009", "a", "Z", "\xff", "\xe2\x80", "\u00c0", "\u0130", "-", "+", "."}
	for range 20000 {
		var b strings.Builder
		for n := rng.IntN(6); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		corpus = append(corpus, b.String())
	}
	for _, s := range corpus {
		if got, want := blank(s), strings.TrimSpace(s) == ""; got != want {
			t.Errorf("blank(%q) = %v, strings.TrimSpace: %v", s, got, want)
		}
	}
	for _, s := range []string{"", "redis", "REDIS", "Rediss", "unix", "UNIX", "a+B-c.D9", "redis+SENTINEL"} {
		if got, want := lowerASCII(s), strings.ToLower(s); got != want {
			t.Errorf("lowerASCII(%q) = %q, strings.ToLower: %q", s, got, want)
		}
	}
}
