package core

import (
	"errors"
	"strings"
)

// nodeURL is what liblock reads from a node URL: url.URL's Scheme, Host,
// Hostname(), Port() and Path.
type nodeURL struct {
	scheme, host, hostname, port, path string
	// password is the raw password's [start, end) in the URL text, or
	// {-1, -1} when the URL has none (parseNodeURLLite only).
	password [2]int
}

var errMalformedURL = errors.New("malformed URL")

// parseNodeURLLite is url.Parse (Go 1.26) cut down to the fields of nodeURL.
// It accepts and rejects exactly the strings url.Parse does and reads the
// same fields (nodeurl_internal_test.go compares the two on a corpus and
// under fuzzing). The wasip1 build uses it instead of net/url, which with
// net/netip and unique adds about 200 KB to liblock.wasm; the native build
// keeps net/url.
func parseNodeURLLite(raw string) (nodeURL, error) {
	u := nodeURL{password: [2]int{-1, -1}}
	rest, frag, _ := strings.Cut(raw, "#")
	if frag != "" {
		if _, err := unescapeURL(frag, modeOther); err != nil {
			return nodeURL{}, err
		}
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < ' ' || rest[i] == 0x7f {
			return nodeURL{}, errMalformedURL
		}
	}
	if rest == "*" {
		u.path = "*"
		return u, nil
	}
	scheme, rest, err := urlScheme(rest)
	if err != nil {
		return nodeURL{}, err
	}
	u.scheme = strings.ToLower(scheme)
	// The query is cut off unchecked; "x?" (a single trailing '?') too.
	rest, _, _ = strings.Cut(rest, "?")

	if !strings.HasPrefix(rest, "/") {
		if u.scheme != "" {
			return u, nil // opaque: no host, no path
		}
		if segment, _, _ := strings.Cut(rest, "/"); strings.Contains(segment, ":") {
			return nodeURL{}, errMalformedURL
		}
	}
	if (u.scheme != "" || !strings.HasPrefix(rest, "///")) && strings.HasPrefix(rest, "//") {
		start := 0 // where rest begins in raw
		if scheme != "" {
			start = len(scheme) + 1
		}
		authority := rest[2:]
		rest = ""
		if i := strings.IndexByte(authority, '/'); i >= 0 {
			authority, rest = authority[:i], authority[i:]
		}
		if err := u.parseAuthority(authority, start+2); err != nil {
			return nodeURL{}, err
		}
	}
	if u.path, err = unescapeURL(rest, modeOther); err != nil {
		return nodeURL{}, err
	}
	return u, nil
}

// urlScheme is net/url's getScheme.
func urlScheme(raw string) (scheme, rest string, err error) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return "", raw, nil
			}
		case c == ':':
			if i == 0 {
				return "", "", errMalformedURL
			}
			return raw[:i], raw[i+1:], nil
		default:
			return "", raw, nil
		}
	}
	return "", raw, nil
}

// parseAuthority is net/url's parseAuthority; off is where authority
// begins in the URL text.
func (u *nodeURL) parseAuthority(authority string, off int) error {
	at := strings.LastIndex(authority, "@")
	host, err := parseURLHost(u.scheme, authority[at+1:])
	if err != nil {
		return err
	}
	u.host = host
	u.hostname, u.port = splitURLHostPort(host)
	if at < 0 {
		return nil
	}
	userinfo := authority[:at]
	for _, r := range userinfo {
		switch {
		case 'A' <= r && r <= 'Z', 'a' <= r && r <= 'z', '0' <= r && r <= '9':
		case strings.ContainsRune("-._:~!$&'()*+,;=%@", r):
		default:
			return errMalformedURL
		}
	}
	username, password, hasPassword := strings.Cut(userinfo, ":")
	if _, err := unescapeURL(username, modeOther); err != nil {
		return err
	}
	if hasPassword {
		if _, err := unescapeURL(password, modeOther); err != nil {
			return err
		}
		start := off + len(username) + 1
		u.password = [2]int{start, start + len(password)}
	}
	return nil
}

// parseURLHost is net/url's parseHost: host[:port], or [IPv6]:port.
func parseURLHost(scheme, host string) (string, error) {
	if open := strings.LastIndex(host, "["); open > 0 {
		return "", errMalformedURL
	} else if open == 0 {
		closing := strings.LastIndex(host, "]")
		if closing < 0 {
			return "", errMalformedURL
		}
		colonPort := host[closing+1:]
		if !validURLPort(colonPort) {
			return "", errMalformedURL
		}
		hostname := host[1:closing]
		var unescaped string
		if zone := strings.Index(hostname, "%25"); zone >= 0 {
			addr, err := unescapeURL(hostname[:zone], modeHost)
			if err != nil {
				return "", err
			}
			zonePart, err := unescapeURL(hostname[zone:], modeZone)
			if err != nil {
				return "", err
			}
			unescaped = addr + zonePart
		} else {
			var err error
			if unescaped, err = unescapeURL(hostname, modeHost); err != nil {
				return "", err
			}
		}
		// Only an IPv6 address may stand in brackets (net/url asks
		// netip.ParseAddr and rejects IPv4).
		if !isIPv6(unescaped) {
			return "", errMalformedURL
		}
		return "[" + unescaped + "]" + colonPort, nil
	} else if i := strings.Index(host, ":"); i != -1 {
		if last := strings.LastIndex(host, ":"); last != i && scheme != "http" && scheme != "https" {
			// net/url allows colons in the host except for http(s).
			i = last
		}
		if !validURLPort(host[i:]) {
			return "", errMalformedURL
		}
	}
	return unescapeURL(host, modeHost)
}

// validURLPort is net/url's validOptionalPort: "" or ":" and digits.
func validURLPort(port string) bool {
	if port == "" {
		return true
	}
	if port[0] != ':' {
		return false
	}
	for _, b := range port[1:] {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// splitURLHostPort is net/url's splitHostPort (Hostname and Port).
func splitURLHostPort(hostPort string) (host, port string) {
	host = hostPort
	if colon := strings.LastIndexByte(host, ':'); colon != -1 && validURLPort(host[colon:]) {
		host, port = host[:colon], host[colon+1:]
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return host, port
}

// The unescape modes parseNodeURLLite needs: the host and an IPv6 zone are
// checked byte by byte; everything else only for well-formed %XX.
const (
	modeOther = iota
	modeHost
	modeZone
)

// hostByteOK reports whether net/url allows an ASCII byte unescaped in a
// host (its shouldEscape(c, encodeHost) is false).
func hostByteOK(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!$&'()*+,;=:[]<>\"-_.~", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// unescapeURL is net/url's unescape for the modes above ('+' stays '+').
func unescapeURL(s string, mode int) (string, error) {
	n := 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '%':
			n++
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", errMalformedURL
			}
			if mode == modeHost && unhex(s[i+1]) < 8 && s[i:i+3] != "%25" {
				return "", errMalformedURL
			}
			if mode == modeZone {
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				if s[i:i+3] != "%25" && v != ' ' && (v >= 0x80 || !hostByteOK(v)) {
					return "", errMalformedURL
				}
			}
			i += 3
		case '+':
			i++
		default:
			if (mode == modeHost || mode == modeZone) && s[i] < 0x80 && !hostByteOK(s[i]) {
				return "", errMalformedURL
			}
			i++
		}
	}
	if n == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s) - 2*n)
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// isIPv6 reports whether netip.ParseAddr parses s as an IPv6 address
// (with an optional zone after '%').
func isIPv6(s string) bool {
	// ParseAddr decides by the first '.', ':' or '%': only ':' can be IPv6.
	if i := strings.IndexAny(s, ".:%"); i < 0 || s[i] != ':' {
		return false
	}
	in := s
	zone := ""
	if i := strings.IndexByte(s, '%'); i != -1 {
		s, zone = s[:i], s[i+1:]
		if zone == "" {
			return false
		}
	}
	ellipsis := -1
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis = 0
		s = s[2:]
		if len(s) == 0 {
			return true
		}
	}
	i := 0
	for i < 16 {
		off := 0
		acc := uint32(0)
		for ; off < len(s); off++ {
			c := s[off]
			if !isHex(c) {
				break
			}
			acc = acc<<4 + uint32(unhex(c))
			if off > 3 || acc > 0xffff {
				return false
			}
		}
		if off == 0 {
			return false
		}
		if off < len(s) && s[off] == '.' {
			if ellipsis < 0 && i != 12 || i+4 > 16 {
				return false
			}
			end := len(in)
			if len(zone) > 0 {
				end -= len(zone) + 1
			}
			if !isIPv4(in[end-len(s) : end]) {
				return false
			}
			s = ""
			i += 4
			break
		}
		i += 2
		s = s[off:]
		if len(s) == 0 {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return false
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return false
			}
			ellipsis = i
			s = s[1:]
			if len(s) == 0 {
				break
			}
		}
	}
	if len(s) != 0 {
		return false
	}
	if i < 16 {
		return ellipsis >= 0
	}
	return ellipsis < 0
}

// isIPv4 is netip's parseIPv4Fields: four decimal octets, no leading zeros.
func isIPv4(s string) bool {
	val, pos, digits := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			if digits == 1 && val == 0 {
				return false
			}
			val = val*10 + int(c-'0')
			digits++
			if val > 255 {
				return false
			}
		case c == '.':
			if i == 0 || i == len(s)-1 || s[i-1] == '.' || pos == 3 {
				return false
			}
			pos++
			val, digits = 0, 0
		default:
			return false
		}
	}
	return pos == 3
}

// redactURLLite replaces the password of a URL parseNodeURLLite accepts
// with "xxxxx" in the text as given.
func redactURLLite(raw string) string {
	u, err := parseNodeURLLite(raw)
	if err != nil {
		return "(malformed URL)"
	}
	if u.password[0] < 0 {
		return raw
	}
	return raw[:u.password[0]] + "xxxxx" + raw[u.password[1]:]
}
