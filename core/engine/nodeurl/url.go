package nodeurl

import (
	"errors"
	"strconv"
	"strings"
)

// This file is net/url's Parse (Go 1.26), with its error messages, cut down
// to what go-redis's ParseURL reads: Scheme, User, Host, Path and RawQuery.
// It accepts and rejects exactly the strings url.Parse does (the package's
// tests compare the two on a corpus and under fuzzing). net/url is not
// used: with net/netip, fmt and reflect it would add hundreds of KB to
// liblock.wasm.

// parsedURL is what ParseURL reads from a *url.URL.
type parsedURL struct {
	scheme   string // lower case
	hasUser  bool   // u.User != nil
	username string // u.User.Username()
	password string // u.User.Password()
	// pwSpan is the password's [start, end) in the URL text as written, or
	// {-1, -1} when the URL has no password.
	pwSpan   [2]int
	host     string // u.Host
	path     string // u.Path
	rawQuery string // u.RawQuery
}

// urlError is url.Parse's *url.Error: `parse "<url>": <err>`.
func urlError(url string, err error) error {
	return errors.New("parse " + strconv.Quote(url) + ": " + err.Error())
}

// parseURL is url.Parse.
func parseURL(raw string) (parsedURL, error) {
	u, frag, _ := strings.Cut(raw, "#")
	p, err := parseReference(u)
	if err != nil {
		return parsedURL{}, urlError(u, err)
	}
	if frag != "" {
		// setFragment: only the escapes are checked (and the error names
		// the whole URL, fragment included).
		if _, err := unescape(frag, encodeFragment); err != nil {
			return parsedURL{}, urlError(raw, err)
		}
	}
	return p, nil
}

// parseReference is net/url's parse(rawURL, viaRequest=false).
func parseReference(raw string) (parsedURL, error) {
	u := parsedURL{pwSpan: [2]int{-1, -1}}
	for i := 0; i < len(raw); i++ {
		if b := raw[i]; b < ' ' || b == 0x7f {
			return parsedURL{}, errors.New("net/url: invalid control character in URL")
		}
	}
	if raw == "*" {
		u.path = "*"
		return u, nil
	}
	scheme, rest, err := getScheme(raw)
	if err != nil {
		return parsedURL{}, err
	}
	u.scheme = lowerASCII(scheme)   // ASCII: getScheme
	restOff := len(raw) - len(rest) // where rest begins in raw

	if strings.HasSuffix(rest, "?") && strings.Count(rest, "?") == 1 {
		rest = rest[:len(rest)-1] // ForceQuery
	} else {
		rest, u.rawQuery, _ = strings.Cut(rest, "?")
	}

	if !strings.HasPrefix(rest, "/") {
		if u.scheme != "" {
			return u, nil // opaque: no user, host or path
		}
		if segment, _, _ := strings.Cut(rest, "/"); strings.Contains(segment, ":") {
			return parsedURL{}, errors.New("first path segment in URL cannot contain colon")
		}
	}

	if (u.scheme != "" || !strings.HasPrefix(rest, "///")) && strings.HasPrefix(rest, "//") {
		authority := rest[2:]
		rest = ""
		if i := strings.Index(authority, "/"); i >= 0 {
			authority, rest = authority[:i], authority[i:]
		}
		if err := u.parseAuthority(authority, restOff+2); err != nil {
			return parsedURL{}, err
		}
	}
	if u.path, err = unescape(rest, encodePath); err != nil {
		return parsedURL{}, err
	}
	return u, nil
}

// getScheme is net/url's getScheme.
func getScheme(raw string) (scheme, rest string, err error) {
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
				return "", "", errors.New("missing protocol scheme")
			}
			return raw[:i], raw[i+1:], nil
		default:
			return "", raw, nil
		}
	}
	return "", raw, nil
}

// parseAuthority is net/url's parseAuthority; off is where authority begins
// in the URL text.
func (u *parsedURL) parseAuthority(authority string, off int) error {
	i := strings.LastIndex(authority, "@")
	host, err := parseHost(u.scheme, authority[i+1:])
	if err != nil {
		return err
	}
	u.host = host
	if i < 0 {
		return nil
	}
	userinfo := authority[:i]
	if !validUserinfo(userinfo) {
		return errors.New("net/url: invalid userinfo")
	}
	username, password, hasPassword := strings.Cut(userinfo, ":")
	if u.username, err = unescape(username, encodeUserPassword); err != nil {
		return err
	}
	if hasPassword {
		if u.password, err = unescape(password, encodeUserPassword); err != nil {
			return err
		}
		start := off + len(username) + 1
		u.pwSpan = [2]int{start, start + len(password)}
	}
	u.hasUser = true
	return nil
}

// validUserinfo is net/url's validUserinfo (RFC 3986 userinfo, plus '@').
// It ranges over runes there; every non-ASCII rune (and invalid UTF-8) is
// refused, so bytes will do.
func validUserinfo(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case strings.IndexByte("-._:~!$&'()*+,;=%@", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// parseHost is net/url's parseHost: host[:port], or [IPv6]:port.
func parseHost(scheme, host string) (string, error) {
	if open := strings.LastIndex(host, "["); open > 0 {
		return "", errors.New("invalid IP-literal")
	} else if open == 0 {
		closing := strings.LastIndex(host, "]")
		if closing < 0 {
			return "", errors.New("missing ']' in host")
		}
		colonPort := host[closing+1:]
		if !validOptionalPort(colonPort) {
			return "", errors.New("invalid port " + strconv.Quote(colonPort) + " after host")
		}
		// (net/url unescapes colonPort too; ":" and digits never fail.)
		hostname := host[1:closing]
		var unescaped string
		if zone := strings.Index(hostname, "%25"); zone >= 0 {
			hostPart, err := unescape(hostname[:zone], encodeHost)
			if err != nil {
				return "", err
			}
			zonePart, err := unescape(hostname[zone:], encodeZone)
			if err != nil {
				return "", err
			}
			unescaped = hostPart + zonePart
		} else {
			var err error
			if unescaped, err = unescape(hostname, encodeHost); err != nil {
				return "", err
			}
		}
		// Only an IPv6 address may stand in brackets.
		is4, err := parseAddr(unescaped)
		if err != nil {
			return "", errors.New("invalid host: " + err.Error())
		}
		if is4 {
			return "", errors.New("invalid IP-literal")
		}
		return "[" + unescaped + "]" + colonPort, nil
	} else if i := strings.Index(host, ":"); i != -1 {
		// Colons in the host: only http and https are strict (GODEBUG
		// urlstrictcolons, at its Go 1.26 default); otherwise the port
		// is after the last one.
		if last := strings.LastIndex(host, ":"); last != i && scheme != "http" && scheme != "https" {
			i = last
		}
		colonPort := host[i:]
		if !validOptionalPort(colonPort) {
			return "", errors.New("invalid port " + strconv.Quote(colonPort) + " after host")
		}
	}
	return unescape(host, encodeHost)
}

// validOptionalPort is net/url's validOptionalPort: "" or ':' and digits.
func validOptionalPort(port string) bool {
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

// splitHostPort is net/url's splitHostPort (url.URL's Hostname and Port).
func splitHostPort(hostPort string) (host, port string) {
	host = hostPort
	if colon := strings.LastIndexByte(host, ':'); colon != -1 && validOptionalPort(host[colon:]) {
		host, port = host[:colon], host[colon+1:]
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return host, port
}

// The encodings of net/url's unescape that parseURL and parseQuery use.
type encoding int

const (
	encodePath encoding = iota
	encodeHost
	encodeZone
	encodeUserPassword
	encodeQueryComponent
	encodeFragment
)

// hostByteOK reports whether net/url leaves an ASCII byte unescaped in a
// host or zone (shouldEscape(c, encodeHost) is false).
func hostByteOK(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.~!$&'()*+,;=:[]<>\"", c) >= 0
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

// escapeError is net/url's EscapeError.
func escapeError(s string) error {
	return errors.New("invalid URL escape " + strconv.Quote(s))
}

// unescape is net/url's unescape, with its errors.
func unescape(s string, mode encoding) (string, error) {
	n := 0
	hasPlus := false
	for i := 0; i < len(s); {
		switch s[i] {
		case '%':
			n++
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				s = s[i:]
				if len(s) > 3 {
					s = s[:3]
				}
				return "", escapeError(s)
			}
			// In a host, %-escapes are for non-ASCII bytes only, but for
			// %25 (RFC 6874's zone separator).
			if mode == encodeHost && unhex(s[i+1]) < 8 && s[i:i+3] != "%25" {
				return "", escapeError(s[i : i+3])
			}
			if mode == encodeZone {
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				if s[i:i+3] != "%25" && v != ' ' && (v >= 0x80 || !hostByteOK(v)) {
					return "", escapeError(s[i : i+3])
				}
			}
			i += 3
		case '+':
			hasPlus = mode == encodeQueryComponent
			i++
		default:
			if (mode == encodeHost || mode == encodeZone) && s[i] < 0x80 && !hostByteOK(s[i]) {
				return "", errors.New("invalid character " + strconv.Quote(s[i:i+1]) + " in host name")
			}
			i++
		}
	}
	if n == 0 && !hasPlus {
		return s, nil
	}
	var t strings.Builder
	t.Grow(len(s) - 2*n)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			t.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case '+':
			if mode == encodeQueryComponent {
				t.WriteByte(' ')
			} else {
				t.WriteByte('+')
			}
		default:
			t.WriteByte(s[i])
		}
	}
	return t.String(), nil
}

// maxQueryParams is net/url's limit on query parameters (GODEBUG
// urlmaxqueryparams, at its default): beyond it ParseQuery fails before
// reading any, and url.URL's Query, which drops the error, is empty.
const maxQueryParams = 10000

// parseQuery is url.ParseQuery(query) as url.URL's Query returns it: the
// malformed pairs dropped, the error ignored.
func parseQuery(query string) map[string][]string {
	m := map[string][]string{}
	if strings.Count(query, "&")+1 > maxQueryParams {
		return m
	}
	for query != "" {
		var key string
		key, query, _ = strings.Cut(query, "&")
		if strings.Contains(key, ";") || key == "" {
			continue // "invalid semicolon separator in query"
		}
		key, value, _ := strings.Cut(key, "=")
		key, err := unescape(key, encodeQueryComponent)
		if err != nil {
			continue
		}
		if value, err = unescape(value, encodeQueryComponent); err != nil {
			continue
		}
		m[key] = append(m[key], value)
	}
	return m
}

// parseAddrError is net/netip's parseAddrError.
func parseAddrError(in, msg, at string) error {
	if at != "" {
		return errors.New("ParseAddr(" + strconv.Quote(in) + "): " + msg + " (at " + strconv.Quote(at) + ")")
	}
	return errors.New("ParseAddr(" + strconv.Quote(in) + "): " + msg)
}

// parseAddr is netip.ParseAddr: it reports whether s is an IPv4 address,
// or ParseAddr's error.
func parseAddr(s string) (is4 bool, err error) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.':
			return true, parseIPv4Fields(s, 0, len(s))
		case ':':
			return false, parseIPv6(s)
		case '%':
			return false, parseAddrError(s, "missing IPv6 address", "")
		}
	}
	return false, parseAddrError(s, "unable to parse IP", "")
}

// parseIPv4Fields is netip's parseIPv4Fields (in[off:end], decimal octets).
func parseIPv4Fields(in string, off, end int) error {
	var val, pos, digLen int
	s := in[off:end]
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if digLen == 1 && val == 0 {
				return parseAddrError(in, "IPv4 field has octet with leading zero", "")
			}
			val = val*10 + int(s[i]) - '0'
			digLen++
			if val > 255 {
				return parseAddrError(in, "IPv4 field has value >255", "")
			}
		} else if s[i] == '.' {
			if i == 0 || i == len(s)-1 || s[i-1] == '.' {
				return parseAddrError(in, "IPv4 field must have at least one digit", s[i:])
			}
			if pos == 3 {
				return parseAddrError(in, "IPv4 address too long", "")
			}
			pos++
			val = 0
			digLen = 0
		} else {
			return parseAddrError(in, "unexpected character", s[i:])
		}
	}
	if pos < 3 {
		return parseAddrError(in, "IPv4 address too short", "")
	}
	return nil
}

// parseIPv6 is netip's parseIPv6, checking only.
func parseIPv6(in string) error {
	s := in
	zone := ""
	if i := strings.IndexByte(s, '%'); i != -1 {
		s, zone = s[:i], s[i+1:]
		if zone == "" {
			return parseAddrError(in, "zone must be a non-empty string", "")
		}
	}
	ellipsis := -1 // position of the ellipsis in the 16 bytes
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis = 0
		s = s[2:]
		if len(s) == 0 {
			return nil
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
			if off > 3 {
				return parseAddrError(in, "each group must have 4 or less digits", s)
			}
			if acc > 0xffff {
				return parseAddrError(in, "IPv6 field has value >=2^16", s)
			}
		}
		if off == 0 {
			return parseAddrError(in, "each colon-separated field must have at least one digit", s)
		}
		if off < len(s) && s[off] == '.' {
			if ellipsis < 0 && i != 12 {
				return parseAddrError(in, "embedded IPv4 address must replace the final 2 fields of the address", s)
			}
			if i+4 > 16 {
				return parseAddrError(in, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
			}
			end := len(in)
			if len(zone) > 0 {
				end -= len(zone) + 1
			}
			if err := parseIPv4Fields(in, end-len(s), end); err != nil {
				return err
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
		if s[0] != ':' {
			return parseAddrError(in, "unexpected character, want colon", s)
		} else if len(s) == 1 {
			return parseAddrError(in, "colon must be followed by more characters", s)
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return parseAddrError(in, "multiple :: in address", s)
			}
			ellipsis = i
			s = s[1:]
			if len(s) == 0 {
				break
			}
		}
	}
	if len(s) != 0 {
		return parseAddrError(in, "trailing garbage after address", s)
	}
	if i < 16 {
		if ellipsis < 0 {
			return parseAddrError(in, "address string too short", "")
		}
	} else if ellipsis >= 0 {
		return parseAddrError(in, "the :: must expand to at least one field of zeros", "")
	}
	return nil
}
