package nodeurl

import (
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goRedis is the reference: go-redis's ParseURL, read into a Spec.
func goRedis(raw string) (Spec, error) {
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return Spec{}, err
	}
	s := Spec{
		Network: opt.Network, Addr: opt.Addr, Username: opt.Username, Password: opt.Password,
		DB: opt.DB, ClientName: opt.ClientName,
	}
	if opt.TLSConfig != nil {
		s.TLS, s.ServerName, s.SkipVerify = true, opt.TLSConfig.ServerName, opt.TLSConfig.InsecureSkipVerify
	}
	return s, nil
}

// sameAsGoRedis checks Parse against redis.ParseURL on raw: both accept
// it and read the same Spec, or both refuse it with the same message
// (Parse's scrubbed, parse's as go-redis wrote it).
func sameAsGoRedis(t *testing.T, raw string) {
	t.Helper()
	if IsFailover(raw) {
		sameAsGoRedisFailover(t, raw) // failover_test.go
		return
	}
	want, wantErr := goRedis(raw)
	got, err := parse(raw)
	pub, pubErr := Parse(raw)
	if wantErr == nil && badPortIn(want) {
		// liblock's own refusal of what go-redis accepts (ports.go).
		require.Errorf(t, err, "%q: a port outside 1-65535, parse accepts it: %+v", raw, got)
		require.Errorf(t, pubErr, "%q: a port outside 1-65535, Parse accepts it: %+v", raw, pub)
		assert.Containsf(t, pubErr.Error(), "redis: invalid port ", "%q", raw)
		return
	}
	if wantErr != nil {
		require.Errorf(t, err, "%q: go-redis refuses it (%v), parse accepts it: %+v", raw, wantErr, got)
		require.Errorf(t, pubErr, "%q: go-redis refuses it (%v), Parse accepts it: %+v", raw, wantErr, pub)
		assert.Equalf(t, wantErr.Error(), err.Error(), "%q: message", raw)
		assert.Equalf(t, scrub(wantErr.Error(), raw), pubErr.Error(), "%q: scrubbed message", raw)
		return
	}
	require.NoErrorf(t, err, "%q: go-redis accepts it (%+v)", raw, want)
	require.NoErrorf(t, pubErr, "%q: go-redis accepts it (%+v)", raw, want)
	assert.Equalf(t, want, got, "%q", raw)
	assert.Equalf(t, want, pub, "%q", raw)
}

// sameAsNetURL checks the URL layer against net/url itself: parseURL
// against url.Parse (accepted set, message, fields), parseQuery against
// url.URL's Query, and Redact.
func sameAsNetURL(t *testing.T, raw string) {
	t.Helper()
	u, wantErr := url.Parse(raw)
	p, err := parseURL(raw)
	if wantErr != nil {
		require.Errorf(t, err, "%q: url.Parse refuses it (%v)", raw, wantErr)
		assert.Equalf(t, wantErr.Error(), err.Error(), "%q: message", raw)
		assert.Equalf(t, "(malformed URL)", Redact(raw), "%q", raw)
		return
	}
	require.NoErrorf(t, err, "%q: url.Parse accepts it", raw)
	want := parsedURL{scheme: u.Scheme, host: u.Host, path: u.Path, rawQuery: u.RawQuery, pwSpan: p.pwSpan}
	hasPassword := false
	if u.User != nil {
		want.hasUser, want.username = true, u.User.Username()
		want.password, hasPassword = u.User.Password()
	}
	assert.Equalf(t, want, p, "%q", raw)
	assert.Equalf(t, hasPassword, p.pwSpan[0] >= 0, "%q: password span %v", raw, p.pwSpan)
	if p.pwSpan[0] >= 0 {
		pw, err := url.PathUnescape(raw[p.pwSpan[0]:p.pwSpan[1]])
		assert.NoErrorf(t, err, "%q", raw)
		assert.Equalf(t, want.password, pw, "%q: password span %v", raw, p.pwSpan)
	}
	assert.Equalf(t, map[string][]string(u.Query()), parseQuery(u.RawQuery), "%q: query", raw)
	assert.Equalf(t, u.Hostname()+"|"+u.Port(), strings.Join(pair(splitHostPort(p.host)), "|"), "%q: Hostname and Port", raw)

	// Redact hides the password and keeps the rest.
	red := Redact(raw)
	r, err := url.Parse(red)
	require.NoErrorf(t, err, "%q: Redact gives %q", raw, red)
	gotPW, has := r.User.Password()
	assert.Equalf(t, hasPassword, has, "%q: Redact gives %q", raw, red)
	if has {
		assert.Equalf(t, "xxxxx", gotPW, "%q: Redact gives %q", raw, red)
	} else {
		assert.Equalf(t, raw, red, "%q: no password to redact", raw)
	}
	assert.Equalf(t, u.Host+"|"+u.Path+"|"+u.User.Username()+"|"+u.RawQuery, r.Host+"|"+r.Path+"|"+r.User.Username()+"|"+r.RawQuery, "%q: Redact gives %q", raw, red)
}

func pair(a, b string) []string { return []string{a, b} }

// badPortIn is the reference for liblock's port rule, written with net and
// strconv: a TCP address of s whose port is not a number from 1 to 65535.
func badPortIn(s Spec) bool {
	if s.Network != "tcp" {
		return false
	}
	for _, addr := range append(append([]string{s.Addr}, s.Seeds...), s.Sentinels...) {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 || strings.ContainsAny(p, "+-") {
			return true
		}
	}
	return false
}

// TestPortRange: a TCP port outside 1-65535 (go-redis accepts it and fails
// at dial; Node's socket layer throws) is refused by Parse, for a server,
// a cluster seed and a sentinel; 1 and 65535 are accepted.
func TestPortRange(t *testing.T) {
	for _, raw := range []string{
		"redis://127.0.0.1:99999", "redis://h:0", "redis://h:65536", "rediss://[::1]:70000", "redis://:secret@h:100000/2",
		"redis://h:000000", "redis://h:99999999999999999999999",
		"redis://a:7000?cluster=yes&addr=b:70000", "redis://a:0?cluster=yes",
		"redis://s1:26379?master_name=m&addr=s2:65536", "redis://s1:99999?master_name=m", "redis://s1:1?master_name=m&addr=s2:x",
	} {
		_, err := Parse(raw)
		require.Errorf(t, err, "%q", raw)
		assert.Containsf(t, err.Error(), "redis: invalid port ", "%q", raw)
		assert.Containsf(t, err.Error(), "a TCP port is a number from 1 to 65535", "%q", raw)
		assert.NotContainsf(t, err.Error(), "secret", "%q", raw)
	}
	for _, raw := range []string{"redis://h:1", "redis://h:65535", "redis://h:00001", "redis://h", "redis://h:",
		"redis://a:7000?cluster=yes&addr=b:65535", "redis://s1?master_name=m&addr=s2:1", "unix:///tmp/s:99999"} {
		_, err := Parse(raw)
		require.NoErrorf(t, err, "%q", raw)
	}
}

// urls is the corpus and a few URLs too long to list there.
func urls() []string {
	all := append([]string(nil), corpus...)
	return append(all,
		// net/url's limit of 10000 query parameters: beyond it the query reads as empty.
		"redis://h?"+strings.Repeat("&", maxQueryParams-1)+"foo=1",
		"redis://h?"+strings.Repeat("&", maxQueryParams)+"foo=1",
		"redis://h?db=3"+strings.Repeat("&", maxQueryParams),
		"redis://u:"+strings.Repeat("p", 300)+"@h:x",
	)
}

func TestCorpusIsLargeAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, raw := range corpus {
		assert.Falsef(t, seen[raw], "%q twice in the corpus", raw)
		seen[raw] = true
	}
	assert.GreaterOrEqual(t, len(seen), 150)
}

// TestParseMatchesGoRedis: Parse accepts, reads and refuses every URL of the
// corpus as go-redis's ParseURL does.
func TestParseMatchesGoRedis(t *testing.T) {
	accepted := 0
	for _, raw := range urls() {
		sameAsGoRedis(t, raw)
		if _, err := redis.ParseURL(raw); err == nil {
			accepted++
		}
	}
	// Both halves are well represented.
	assert.Greater(t, accepted, 100)
	assert.Greater(t, len(urls())-accepted, 100)
}

// TestURLLayerMatchesNetURL: under go-redis, the URL is read as url.Parse
// reads it, with its messages.
func TestURLLayerMatchesNetURL(t *testing.T) {
	for _, raw := range urls() {
		sameAsNetURL(t, raw)
	}
}

// byteTemplates put every byte, raw, as a rune and %-escaped, into each part
// of a URL.
var byteTemplates = []string{
	"redis://u:p@h%s:1/0", "redis://%s@h:1", "redis://u:%s@h:1", "redis://h:1/%s", "redis://h:%s",
	"redis://[::1%25%s]:1", "redis://[::%s1]:1", "redis://[%s::1]:1", "%sredis://h:1", "red%sis://h:1", "redis:%s//h:1",
	"redis://h:1#%s", "redis://h:1?%s", "redis://h:1?db=%s", "redis://h:1?client_name=%s", "redis://h:1?%s=1",
	"rediss://h?skip_verify=%s", "redis://h?dial_timeout=1%s", "unix://%s/x", "unix:///t%s", "%s", "x%s:y", "redis://%s",
}

func byteVariants(tmpl string, b int) []string {
	const hex = "0123456789abcdef"
	var out []string
	for _, ins := range []string{string(rune(b)), string([]byte{byte(b)}), "%" + strings.ToUpper(hex[b>>4:b>>4+1]) + hex[b&15:b&15+1], "%" + hex[b>>4:b>>4+1] + hex[b&15:b&15+1]} {
		out = append(out, strings.Replace(tmpl, "%s", ins, 1))
	}
	return out
}

// TestEveryByteInEveryPart compares with go-redis and net/url on every byte
// in every part of a few URLs.
func TestEveryByteInEveryPart(t *testing.T) {
	for _, tmpl := range byteTemplates {
		for b := 0; b < 256; b++ {
			for _, raw := range byteVariants(tmpl, b) {
				sameAsGoRedis(t, raw)
				sameAsNetURL(t, raw)
			}
		}
	}
}

// TestQueryMatchesNetURL compares parseQuery with url.ParseQuery (as
// url.URL's Query uses it: errors dropped) on query strings of their own.
func TestQueryMatchesNetURL(t *testing.T) {
	for _, q := range []string{
		"", "&", "a", "a=", "=a", "a=1&a=2", "a=1;b=2", "a=1&b;c=2&d=3", "%zz=1&b=2", "b=%zz&c=3", "a+b=c+d", "a%20b=%2B",
		"a=1&&b=2", "a=%", "a=%4", "a==b", "a=b=c", "%3D=%26", "a=1&a", "ü=ü", "\xff=\xfe",
		strings.Repeat("a=1&", maxQueryParams-1) + "b=2", strings.Repeat("a=1&", maxQueryParams) + "b=2",
	} {
		v, _ := url.ParseQuery(q)
		assert.Equalf(t, map[string][]string(v), parseQuery(q), "%q", q)
	}
}

func TestParseExamples(t *testing.T) {
	s, err := Parse("rediss://al%40ce:p%3Ass@[fe80::1%25eth0]:7000/3?skip_verify=true&client_name=a+b&dial_timeout=1s")
	require.NoError(t, err)
	assert.Equal(t, Spec{
		Network: "tcp", Addr: "[fe80::1%eth0]:7000", TLS: true, ServerName: "fe80::1%eth0", SkipVerify: true,
		Username: "al@ce", Password: "p:ss", DB: 3, ClientName: "a b",
	}, s)

	s, err = Parse("unix://:pw@/tmp/redis.sock?db=2")
	require.NoError(t, err)
	assert.Equal(t, Spec{Network: "unix", Addr: "/tmp/redis.sock", Password: "pw", DB: 2}, s)

	s, err = Parse("redis://")
	require.NoError(t, err)
	assert.Equal(t, Spec{Network: "tcp", Addr: "localhost:6379"}, s)

	_, err = Parse("redis://h?foo=1&bar=2")
	assert.EqualError(t, err, "redis: unexpected option: bar, foo")
	_, err = Parse("redis://u:secret@h:x")
	assert.EqualError(t, err, `parse "redis://u:xxxxx@h:x": invalid port ":x" after host`)
	_, err = Parse("redis://:p4ss/w0rd@host:6379")
	assert.EqualError(t, err, `parse "redis://:xxxxx@host:6379": invalid port ":xxxxx" after host`)
	_, err = Parse("redis://:p4ss#w0rd@host:6379")
	assert.EqualError(t, err, `parse "redis://:xxxxx": invalid port ":xxxxx" after host`)
	_, err = Parse("redis://h:1/1/2")
	assert.EqualError(t, err, "redis: invalid URL path: /1/2")

	assert.Equal(t, "redis://u:xxxxx@h:1/0", Redact("redis://u:secret@h:1/0"))
	assert.Equal(t, "redis://u:xxxxx@h", Redact("redis://u:@h"))
	assert.Equal(t, "redis://u@h", Redact("redis://u@h"))
	assert.Equal(t, "(malformed URL)", Redact("redis://u:secret@h:x"))
}

// goRedisWords is the fixed text of every message of ParseURL and
// url.Parse: a password that is a piece of it is "in" the message without
// having been copied there.
const goRedisWords = `parse "": net/url: invalid control character in URL missing protocol scheme first path segment in URL cannot contain colon
net/url: invalid userinfo invalid IP-literal missing ']' in host invalid port "" after host invalid host: ParseAddr(""): (at "")
missing IPv6 address unable to parse IP IPv4 field has octet with leading zero IPv4 field has value >255 IPv4 field must have at least one digit
IPv4 address too long unexpected character IPv4 address too short zone must be a non-empty string each group must have 4 or less digits
IPv6 field has value >=2^16 each colon-separated field must have at least one digit embedded IPv4 address must replace the final 2 fields of the address
too many hex fields to fit an embedded IPv4 at the end of the address unexpected character, want colon colon must be followed by more characters
multiple :: in address trailing garbage after address address string too short the :: must expand to at least one field of zeros
invalid URL escape "" invalid character "" in host name redis: invalid URL scheme: redis: invalid database number: ""
redis: invalid URL path: redis: empty unix socket path strconv.Atoi: parsing "": invalid syntax value out of range
time: invalid duration "" time: missing unit in duration "" time: unknown unit "" in duration ""
boolean: expected true/false/1/0 or an empty string, got "" redis: unexpected option: , ` + optionNames

const optionNames = `db protocol client_name max_retries min_retry_backoff max_retry_backoff dial_timeout read_timeout write_timeout
pool_fifo pool_size pool_timeout min_idle_conns max_idle_conns max_active_conns max_concurrent_dials pipeline_pool_size
pipeline_read_buffer_size pipeline_write_buffer_size conn_max_idle_time idle_timeout conn_max_lifetime max_conn_age
conn_max_lifetime_jitter skip_verify number duration`

// leaks returns the first of secrets that msg repeats, but for those that
// are a piece of go-redis's own words or of the mask.
func leaks(msg string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) && !strings.Contains(goRedisWords, s) && !strings.Contains(mask, s) {
			return s
		}
	}
	return ""
}

// noPasswordIn checks that raw's message, if any, does not repeat raw's
// password (as url.Parse reads it: written and unescaped).
func noPasswordIn(t *testing.T, raw string) {
	t.Helper()
	_, err := Parse(raw)
	if err == nil {
		return
	}
	pw := passwordText(raw)
	dec, _ := url.PathUnescape(pw)
	q := strconv.Quote(pw)
	assert.Emptyf(t, leaks(err.Error(), pw, dec, q[1:len(q)-1]), "%q: %s", raw, err)
}

// TestNoPasswordInMessages: Parse's messages never repeat the password,
// whichever part of the URL go-redis or url.Parse complains about.
func TestNoPasswordInMessages(t *testing.T) {
	for _, raw := range urls() {
		noPasswordIn(t, raw)
	}
	// A distinctive password in every part of a URL that can fail.
	passwords := map[string][]string{ // as written: the secrets it must not leak
		"hunter2":           {"hunter2"},
		"S3cr%45t-pw":       {"S3cr%45t-pw", "S3crEt-pw"},
		"p4ss/w0rd":         {"p4ss/w0rd", "p4ss", "w0rd"},
		"p4ss?w0rd":         {"p4ss?w0rd", "p4ss", "w0rd"},
		"p4ss#w0rd":         {"p4ss#w0rd", "p4ss", "w0rd"},
		"1234/w0rd":         {"1234/w0rd", "1234", "w0rd"},
		"1234#w0rd":         {"1234#w0rd", "1234", "w0rd"},
		"ab/cdef?ghi#jkl":   {"ab/cdef?ghi#jkl", "ab", "cdef", "ghi", "jkl", "ab/cdef?ghi"},
		"50%off-sale":       {"50%off-sale", "%of", "off-sale"},
		"pa%zzword":         {"pa%zzword", "%zz", "word"},
		"se\"cret":          {`se"cret`, `se\"cret`},
		"se cret":           {"se cret"},
		"sec\x01ret":        {"sec\x01ret", `sec\x01ret`},
		"s%C3%A9cr%C3%A9t!": {"s%C3%A9cr%C3%A9t!", "sécrét!", `s\xc3\xa9cr\xc3\xa9t!`},
		"sécrét":            {"sécrét"},
	}
	templates := []string{
		"redis://u:%s@h:1", "redis://:%s@h:x", "redis://u:%s@[::1", "redis://u:%s@h:1/%s", "redis://u:%s@h:1?%s=1",
		"redis://u:%s@h:1?db=%s", "rediss://u:%s@h:1?skip_verify=%s", "redis://u:%s@h:1?dial_timeout=%s",
		"redis://u:%s@h:1?pool_size=%s", "redis://u:%s@h:1/%%qq", "redis://u:%s@h:1#%%qq", "//u:%s@h:x",
		"redis:u:%s@h#%%qq", "ftp://u:%s@h", "unix://u:%s@/tmp/s?db=%s", "redis://u:%s@h%%qq", "redis://u:%s@h:1/x/%s",
		"%s://u:%s@h", "redis://u:%s@h:1?%s", "redis://u:%s@[%s]", "redis://u:%s@h:1?%s=1&%s=2",
	}
	checked := 0
	for pw, secrets := range passwords {
		for _, tmpl := range templates {
			raw := strings.ReplaceAll(tmpl, "%s", pw)
			raw = strings.ReplaceAll(raw, "%%", "%")
			_, err := Parse(raw)
			if err == nil {
				continue
			}
			checked++
			assert.Emptyf(t, leaks(err.Error(), secrets...), "%q: %s", raw, err)
			noPasswordIn(t, raw)
			sameAsGoRedis(t, raw)
		}
	}
	assert.Greater(t, checked, 200)
}

// FuzzParse compares Parse with go-redis's ParseURL (and its URL layer with
// net/url) on any input, and checks that no message repeats the password:
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 30s ./core/engine/nodeurl/
//
// Without -fuzz it runs the corpus and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, raw := range corpus {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		sameAsGoRedis(t, raw)
		sameAsNetURL(t, raw)
		noPasswordIn(t, raw)
	})
}

// TestHugeURLs: a megabyte of hostile URL is refused (and its message
// scrubbed) the way go-redis refuses it. Its cost is FuzzParse's and the
// benchmarks' business: a timed assertion here fails only a busy machine.
func TestHugeURLs(t *testing.T) {
	var pieces strings.Builder
	pieces.WriteString("redis://u:x")
	for i := 0; pieces.Len() < 1<<20; i++ {
		pieces.WriteString("/p" + strconv.Itoa(i))
	}
	pieces.WriteString("@h:x")
	for _, raw := range []string{
		pieces.String(),
		"redis://h?" + strings.Repeat("a\"=1&", maxQueryParams-1) + strings.Repeat("b", 1<<20),
		"redis://h?" + strings.Repeat("x", 1<<20) + "=1",
		"redis://u:" + strings.Repeat("\"", 1<<20) + "@h:x",
		"redis://u:p@h:1/" + strings.Repeat("\"/", 1<<19),
		"redis://:" + strings.Repeat("%zz", 1<<18) + "@h",
	} {
		_, err := Parse(raw)
		assert.Error(t, err, "%.40q...", raw)
		sameAsGoRedis(t, raw)
	}
}

// TestRandomCombinations compares with go-redis and net/url on URLs put
// together from random parts, many query options at a time (the fuzzer
// rarely builds those): which error go-redis reports first depends on the
// order in which it reads the options.
func TestRandomCombinations(t *testing.T) {
	schemes := []string{"redis", "rediss", "unix", "REDISS", "http", ""}
	userinfos := []string{"", "u@", "u:p@", ":p@", ":@", "u%40x:p%3A@", "u:p%zz@", "u:p/q@", "u:p#q@", "a@b:c@", "u p@"}
	hosts := []string{"", "h", "h:1", "h:", "[::1]", "[::1]:2", "[fe80::1%25en0]:3", "h:x", "[1.2.3.4]", "a:1:2", "h%41", "h%zz"}
	paths := []string{"", "/", "/3", "/x", "//4//", "/1/2", "/-1", "/tmp/s", "/%zz", "/%20"}
	keys := []string{
		"db", "protocol", "client_name", "max_retries", "min_retry_backoff", "max_retry_backoff", "dial_timeout",
		"read_timeout", "write_timeout", "pool_fifo", "pool_size", "pool_timeout", "min_idle_conns", "max_idle_conns",
		"max_active_conns", "max_concurrent_dials", "pipeline_pool_size", "pipeline_read_buffer_size",
		"pipeline_write_buffer_size", "conn_max_idle_time", "idle_timeout", "conn_max_lifetime", "max_conn_age",
		"conn_max_lifetime_jitter", "skip_verify", "foo", "Bar", "password", "%zz", "a;b", "",
	}
	values := []string{"", "1", "0", "-1", "true", "false", "x", "3s", "1.5h", "3x", "99999999999999999999", "+2", "%zz", "a+b", "%C2%B5s", "1%CE%BCs"}
	frags := []string{"", "#", "#f", "#%zz"}
	rnd := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[rnd.IntN(len(s))] }
	for range 20000 {
		var b strings.Builder
		if s := pick(schemes); s != "" {
			b.WriteString(s + "://")
		}
		b.WriteString(pick(userinfos) + pick(hosts) + pick(paths))
		if n := rnd.IntN(5); n > 0 {
			b.WriteString("?")
			for i := range n {
				if i > 0 {
					b.WriteString("&")
				}
				b.WriteString(pick(keys) + "=" + pick(values))
			}
		}
		b.WriteString(pick(frags))
		raw := b.String()
		sameAsGoRedis(t, raw)
		sameAsNetURL(t, raw)
		noPasswordIn(t, raw)
	}
}
