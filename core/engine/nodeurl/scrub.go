package nodeurl

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// mask stands for a password in messages (as in core's scrub and Redact).
const mask = "xxxxx"

// scrub removes raw's password from msg, a message of go-redis's ParseURL
// about raw. go-redis repeats the URL as given in url.Parse's errors
// (`parse "<url>": ...`), and a path or query value in its own.
//
// What counts as the password:
//   - the URL's password as url.Parse splits it (as written and
//     unescaped), whether or not the rest of the URL is well formed;
//   - what was probably meant as one: the text between the first ':' and
//     the last '@' after "//" (core's scrub), that text up to a '#', and its
//     pieces between '/', '?' and '#' (the first one, then up to 7 more of
//     3 bytes or more). A password with an unescaped '/', '?' or '#' cuts
//     the URL there, and the messages then quote a piece of it:
//     `parse "redis://:p4ss": invalid port ":p4ss" after host` for
//     redis://:p4ss#w0rd@h, `invalid database number: "w0rd@h"` for
//     redis://:1234/w0rd@h.
//
// Each is replaced by "xxxxx" wherever go-redis's message quotes text from
// the URL: in Go-quoted strings (as strconv.Quote and the time package
// quote them) and after "invalid URL scheme: ", "invalid URL path: ",
// "unexpected option: " and "unable to parse addr param: ". A bad escape
// that lies in the password (`invalid URL escape "%zz"`) is masked as a
// whole. The password written
// elsewhere in the URL too is masked there as well (redis://u:hunter2@h?db=hunter2),
// as core's scrub did. The message's own words are never changed, even
// when the password is one of them.
func scrub(msg, raw string) string {
	forms := secretForms(raw)
	if len(forms) == 0 {
		return msg
	}
	for _, prefix := range []string{"redis: invalid URL scheme: ", "redis: invalid URL path: ", "redis: unexpected option: ", "redis: unable to parse addr param: "} {
		if strings.HasPrefix(msg, prefix) {
			return prefix + hide(msg[len(prefix):], forms)
		}
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		j := strings.IndexByte(msg[i:], '"')
		if j < 0 {
			b.WriteString(msg[i:])
			break
		}
		b.WriteString(msg[i : i+j])
		i += j
		q, err := strconv.QuotedPrefix(msg[i:])
		if err != nil {
			b.WriteByte('"')
			i++
			continue
		}
		inner := hide(q[1:len(q)-1], forms)
		if strings.HasSuffix(msg[:i], "invalid URL escape ") {
			if v, err := strconv.Unquote(q); err == nil && inPassword(v, forms) {
				inner = mask
			}
		}
		b.WriteByte('"')
		b.WriteString(inner)
		b.WriteByte('"')
		i += len(q)
	}
	return b.String()
}

// hide replaces every form of the password in s, longest first.
func hide(s string, forms []string) string {
	for _, f := range forms {
		s = strings.ReplaceAll(s, f, mask)
	}
	return s
}

// inPassword reports whether s is part of one of the password's forms.
func inPassword(s string, forms []string) bool {
	for _, f := range forms {
		if strings.Contains(f, s) {
			return true
		}
	}
	return false
}

// secretForms returns what scrub removes for raw: each password candidate
// (see scrub) as written, unescaped, and quoted by strconv.Quote and by
// the time package, longest first.
func secretForms(raw string) []string {
	var secrets []string
	add := func(s string) {
		if s != "" {
			secrets = append(secrets, s)
			if d, err := unescape(s, encodeUserPassword); err == nil && d != s {
				secrets = append(secrets, d)
			}
		}
	}
	if u, err := parseURL(raw); err == nil {
		if u.pwSpan[0] >= 0 {
			add(raw[u.pwSpan[0]:u.pwSpan[1]])
		}
	} else {
		add(passwordText(raw))
	}
	rest := raw
	if i := strings.Index(raw, "//"); i >= 0 {
		rest = raw[i+2:]
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if colon := strings.IndexByte(rest[:at], ':'); colon >= 0 {
			pw := rest[colon+1 : at]
			add(pw)
			if i := strings.IndexByte(pw, '#'); i >= 0 {
				add(pw[:i])
			}
			// (A bounded number of pieces keeps scrub linear.)
			pieces := strings.FieldsFunc(pw, func(r rune) bool { return r == '/' || r == '?' || r == '#' })
			for i, n := 0, 0; i < len(pieces) && n < 8; i++ {
				if i == 0 || len(pieces[i]) >= 3 {
					add(pieces[i])
					n++
				}
			}
		}
	}
	var forms []string
	for _, s := range secrets {
		q := strconv.Quote(s)
		forms = append(forms, s, q[1:len(q)-1], timeQuote(s))
	}
	sortStrings(forms, func(a, b string) bool { return len(a) > len(b) || len(a) == len(b) && a < b })
	out := forms[:0]
	for i, f := range forms {
		if i == 0 || f != forms[i-1] {
			out = append(out, f)
		}
	}
	return out
}

// passwordText returns the password as written in raw, as url.Parse would
// split it, whether or not the rest of raw is well formed.
func passwordText(raw string) string {
	u, _, _ := strings.Cut(raw, "#")
	_, rest, err := getScheme(u)
	if err != nil {
		return ""
	}
	rest, _, _ = strings.Cut(rest, "?")
	if !strings.HasPrefix(rest, "//") {
		return ""
	}
	authority := rest[2:]
	if i := strings.Index(authority, "/"); i >= 0 {
		authority = authority[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(authority[:at], ":")
	return pw
}

// timeQuote is the time package's quote without its quotes, as in
// time.ParseDuration's errors.
func timeQuote(s string) string {
	const lowerhex = "0123456789abcdef"
	buf := make([]byte, 0, len(s))
	for i, c := range s {
		if c >= utf8.RuneSelf || c < ' ' {
			var width int
			if c == utf8.RuneError {
				width = 1
				if i+2 < len(s) && s[i:i+3] == string(utf8.RuneError) {
					width = 3
				}
			} else {
				width = len(string(c))
			}
			for j := 0; j < width; j++ {
				buf = append(buf, '\\', 'x', lowerhex[s[i+j]>>4], lowerhex[s[i+j]&0xF])
			}
		} else {
			if c == '"' || c == '\\' {
				buf = append(buf, '\\')
			}
			buf = append(buf, byte(c))
		}
	}
	return string(buf)
}
