package core

import (
	"net/url"
	"strings"
	"testing"
)

// nodeURLCorpus holds node URLs, good and bad, for the comparison of
// parseNodeURLLite (wasip1) with net/url (native).
var nodeURLCorpus = []string{
	"", "*", "*#x", "redis://h:1", "REDIS://H:1", "rediss://h:6380/2", "redis://127.0.0.1:7001",
	"redis://u:p@h:1", "redis://u:p@ss@h:1/0", "redis://:secret@h:1", "redis://u@h", "redis://u:@h:1",
	"redis://u:p%41@h:1", "redis://u:p%zz@h:1", "redis://u:p%4@h:1", "redis://u%@h:1", "redis://ü:p@h:1",
	"redis://u p@h:1", "redis://u/p@h:1", "redis://h:abc", "redis://h:", "redis://h:1:2", "http://h:1:2",
	"https://a:1:2/", "redis://a,b:1,c:2", "redis://[::1]:6379", "redis://[::1]", "redis://[::1]x",
	"redis://[::1]:x", "redis://[::1", "redis://x[::1]", "redis://[1.2.3.4]:1", "redis://[::ffff:1.2.3.4]:1",
	"redis://[::ffff:1.2.3.04]", "redis://[fe80::1%25en0]:1", "redis://[fe80::1%25]:1", "redis://[fe80::1%en0]",
	"redis://[fe80::1%25en%200]", "redis://[fe80::1%25en%0a]", "redis://[fe80::1%25%C3%BC]", "redis://[%3A%3A1]",
	"redis://[1:2:3:4:5:6:7:8]", "redis://[1:2:3:4:5:6:7:8:9]", "redis://[1::2::3]", "redis://[:1]", "redis://[1:]",
	"redis://[::]", "redis://[12345::]", "redis://[1:2:3:4:5:6:1.2.3.4]", "redis://[1:2:3:4:5:1.2.3.4]",
	"redis://[::1.2.3]", "redis://[::1.2.3.4.5]", "redis://[::256.1.1.1]", "redis://[1:2:3:4:5:6:7::]",
	"redis://[::1:2:3:4:5:6:7]", "redis://[::1:2:3:4:5:6:7:8]", "redis://[g::1]", "redis://[ffff::1]",
	"redis://h%41:1", "redis://h%C3%BC:1", "redis://h%25:1", "redis://h%2:1", "redis://hü:1", "redis://h_x-y.z~:1",
	"redis://h<>:1", "redis://h\":1", "redis://h{}:1", "redis://h|:1", "redis://h\\:1", "redis://h^:1", "redis://h`:1",
	"redis://h :1", "redis://h\x00:1", "redis://h\x7f:1", "redis://h\t:1", "redis://h:1/\x01", "redis://h:1#\x01",
	"redis://h:1#%zz", "redis://h:1#%41", "redis://h:1?x#y", "redis://h:1?", "redis://h:1??", "redis://h:1?%zz",
	"redis://h:1/%zz", "redis://h:1/%2F", "redis://h:1/a b", "redis://", "redis:", "redis:h:1", "redis:/h",
	"redis:///", "redis:////h", "unix:///tmp/r.sock", "unix:/tmp/r.sock", "unix://h/tmp/r.sock", "unix://",
	"unix:", "unix:rel", "unix:///tmp/%zz", "unix:///tmp/%41?db=1", "unix:///tmp/r.sock#f", "UNIX:///x",
	"//h:1", "///h", "h:1", "a/b:c", "a:b/c", ":x", "1redis://h", "+x://h", "re+dis.-x://h", "re dis://h",
	"redis://h:1/0", "redis://h:1/x", "redis://u:p@[::1]:1/3", "redis://@h:1", "redis://u:p@@h:1", "redis://h@:1",
	"redis://h/#", "#", "#%zz", "redis://h:1%", "redis://h:1%20", "redis://h%3a1", "redis://h%00", "redis://h%7f",
	"redis://h%80", "redis://[::1%25%7f]", "redis://[::1%25%20]", "redis://[::1%25%2A]", "redis://[::1%25*]",
}

func sameNodeURL(t *testing.T, raw string) {
	t.Helper()
	lite, liteErr := parseNodeURLLite(raw)
	u, err := url.Parse(raw)
	if (liteErr == nil) != (err == nil) {
		t.Fatalf("%q: lite error %v, net/url error %v", raw, liteErr, err)
	}
	if err != nil {
		return
	}
	want := nodeURL{scheme: u.Scheme, host: u.Host, hostname: u.Hostname(), port: u.Port(), path: u.Path, password: lite.password}
	if lite != want {
		t.Fatalf("%q: lite %+v, net/url %+v", raw, lite, want)
	}
	// The lite redaction hides the password and keeps the rest.
	red, err := url.Parse(redactURLLite(raw))
	if err != nil {
		t.Fatalf("%q: lite redaction %q does not parse: %v", raw, redactURLLite(raw), err)
	}
	_, had := u.User.Password()
	got, has := red.User.Password()
	if had != has || has && got != "xxxxx" || red.Host != u.Host || red.Path != u.Path || red.User.Username() != u.User.Username() {
		t.Fatalf("%q: lite redaction %q", raw, redactURLLite(raw))
	}
}

// TestNodeURLLiteMatchesNetURL: the wasip1 build's URL parser accepts and
// reads exactly what net/url does.
func TestNodeURLLiteMatchesNetURL(t *testing.T) {
	for _, raw := range nodeURLCorpus {
		sameNodeURL(t, raw)
	}
	// Every byte in every part of a few URLs.
	templates := []string{"redis://u:p@h%s:1/0", "redis://%s@h:1", "redis://u:%s@h:1", "redis://h:1/%s", "redis://h:%s",
		"redis://[::1%25%s]:1", "redis://[::%s1]:1", "%sredis://h:1", "red%sis://h:1", "redis:%s//h:1", "redis://h:1#%s",
		"redis://h:1?%s", "unix://%s/x", "%s", "x%s:y", "redis://%s"}
	for _, tmpl := range templates {
		for b := 0; b < 256; b++ {
			for _, ins := range []string{string(rune(b)), string([]byte{byte(b)}), "%" + strings.ToUpper(string("0123456789abcdef"[b>>4])) + string("0123456789abcdef"[b&15])} {
				sameNodeURL(t, strings.Replace(tmpl, "%s", ins, 1))
			}
		}
	}
}

// FuzzNodeURLLite compares parseNodeURLLite with net/url on any input
// (go test -fuzz FuzzNodeURLLite ./core/); without -fuzz it runs the corpus.
func FuzzNodeURLLite(f *testing.F) {
	for _, raw := range nodeURLCorpus {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) { sameNodeURL(t, raw) })
}
