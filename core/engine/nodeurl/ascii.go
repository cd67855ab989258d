package nodeurl

// strings.ToLower and strings.TrimSpace would link package unicode's case
// and White_Space tables into liblock.wasm; these answer the same for what
// nodeurl asks of them (TestASCIIHelpers).

// lowerASCII is strings.ToLower for ASCII text (a URL scheme: getScheme
// takes only ASCII letters, digits, '+', '-' and '.').
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// blank reports whether strings.TrimSpace(s) == "": s is only white space
// (unicode.IsSpace), and not an invalid byte among it.
func blank(s string) bool {
	for _, r := range s { // an invalid byte is utf8.RuneError: not a space
		if !isSpace(r) {
			return false
		}
	}
	return true
}

// isSpace is unicode.IsSpace: the White_Space property.
func isSpace(r rune) bool {
	switch {
	case r <= 0xFF:
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0:
			return true
		}
		return false
	case 0x2000 <= r && r <= 0x200A:
		return true
	}
	switch r {
	case 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return false
}
