package nodeurl

import (
	"errors"
	"strconv"
	"strings"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// Spec is everything liblock needs to connect to one node.
type Spec struct {
	Network            string // "tcp" or "unix"
	Addr               string // "host:port" (net.JoinHostPort form, IPv6 in brackets) or the socket path
	TLS                bool   // rediss://
	ServerName         string // TLS server name (the host, as go-redis sets tls.Config.ServerName)
	SkipVerify         bool   // ?skip_verify=true
	Username, Password string
	DB                 int
	ClientName         string // ?client_name=
	// A Sentinel node (failover.go): the master name and the sentinels to
	// ask for its primary, with their own credentials. Empty for a plain
	// node.
	MasterName                         string
	Sentinels                          []string // host:port, the URL's host first
	SentinelUsername, SentinelPassword string
	// A Redis Cluster node (cluster.go): cluster=yes, and its seeds (the
	// URL's host first, then every addr=); Addr is the first seed.
	Cluster bool
	Seeds   []string
}

// Parse reads one node URL exactly as go-redis v9.23.0's redis.ParseURL
// does (same accepted set, same fields, go-redis's own error text), but
// with the password never appearing in an error message.
func Parse(raw string) (Spec, error) {
	s, err := parse(raw)
	if err != nil {
		return Spec{}, errors.New(scrub(err.Error(), raw))
	}
	return s, nil
}

// Redact returns raw with its password replaced by "xxxxx" in the text as
// given, or "(malformed URL)" when url.Parse would refuse raw — for
// messages and logs. (This is core.RedactURL's behaviour in the wasip1
// build; the native build's net/url Redacted also re-escapes the rest.)
// A Sentinel URL's password= option (the primary's password) is replaced
// too.
func Redact(raw string) string {
	u, err := parseURL(raw)
	if err != nil {
		return "(malformed URL)"
	}
	if u.pwSpan[0] >= 0 {
		raw = raw[:u.pwSpan[0]] + "xxxxx" + raw[u.pwSpan[1]:]
	}
	if _, ok := parseQuery(u.rawQuery)["master_name"]; ok {
		raw = redactQueryPassword(raw) // a Sentinel URL's primary password (failover.go)
	}
	return raw
}

// parse is redis.ParseURL, its error message unscrubbed, plus liblock's
// port range (ports.go).
func parse(raw string) (Spec, error) {
	s, err := parseGoRedis(raw)
	if err != nil {
		return Spec{}, err
	}
	if err := checkPorts(s); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// parseGoRedis is redis.ParseURL (or ParseFailoverURL, ParseClusterURL for
// those nodes) with liblock's refusals of options, before the port check.
func parseGoRedis(raw string) (Spec, error) {
	u, err := parseURL(raw)
	if err != nil {
		return Spec{}, err
	}
	q := parseQuery(u.rawQuery)
	if isCluster(q) {
		return parseCluster(u) // cluster.go
	}
	if _, ok := q["master_name"]; ok {
		return parseFailover(u)
	}
	switch u.scheme {
	case "redis", "rediss":
		return setupTCPConn(u)
	case "unix":
		return setupUnixConn(u)
	default:
		return Spec{}, errors.New("redis: invalid URL scheme: " + u.scheme)
	}
}

// pathDB is the database number of a redis:// or rediss:// URL's path
// ("/2"; none: 0), as go-redis reads it.
func pathDB(path string) (int, error) {
	f := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	switch len(f) {
	case 0:
		return 0, nil
	case 1:
		db, err := strconv.Atoi(f[0])
		if err != nil {
			return 0, errors.New("redis: invalid database number: " + strconv.Quote(f[0]))
		}
		return db, nil
	default:
		return 0, errors.New("redis: invalid URL path: " + path)
	}
}

func setupTCPConn(u parsedURL) (Spec, error) {
	s := Spec{Network: "tcp", Username: u.username, Password: u.password}

	h, addr := hostPortWithDefaults(u.host)
	s.Addr = addr

	db, err := pathDB(u.path)
	if err != nil {
		return Spec{}, err
	}
	s.DB = db

	if u.scheme == "rediss" {
		s.TLS = true
		s.ServerName = h
	}
	return setupConnParams(u, s)
}

// hostPortWithDefaults is go-redis's getHostPortWithDefaults: the URL's
// host (localhost when empty) and its host:port (port 6379 when empty),
// for a server, a cluster's first seed and a Sentinel node's first sentinel
// alike.
func hostPortWithDefaults(hostPort string) (host, addr string) {
	h, p := splitHostPort(hostPort)
	if h == "" {
		h = "localhost"
	}
	if p == "" {
		p = "6379"
	}
	return h, joinHostPort(h, p)
}

// joinHostPort is net.JoinHostPort.
func joinHostPort(host, port string) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

func setupUnixConn(u parsedURL) (Spec, error) {
	if blank(u.path) { // strings.TrimSpace(u.path) == ""
		return Spec{}, errors.New("redis: empty unix socket path")
	}
	s := Spec{Network: "unix", Addr: u.path, Username: u.username, Password: u.password}
	return setupConnParams(u, s)
}

// queryOptions is go-redis's: each option read is removed, so that what
// is left is unknown; the first bad value is the error.
type queryOptions struct {
	q   map[string][]string
	err error
}

func (o *queryOptions) has(name string) bool { return len(o.q[name]) > 0 }

// poolOptions reads the connection-pool options that the single-node and
// the cluster URL both take, in go-redis's order (the first bad value is
// the error); liblock checks their values and uses none.
func (o *queryOptions) poolOptions() {
	o.int("max_retries")
	o.duration("min_retry_backoff")
	o.duration("max_retry_backoff")
	o.duration("dial_timeout")
	o.duration("read_timeout")
	o.duration("write_timeout")
	o.bool("pool_fifo")
	o.int("pool_size")
	o.duration("pool_timeout")
	o.int("min_idle_conns")
	o.int("max_idle_conns")
	o.int("max_active_conns")
	o.int("max_concurrent_dials")
}

// skipVerify reads skip_verify, which only a rediss:// URL takes (another
// keeps it, an unexpected option), and returns the first bad value's error.
func (o *queryOptions) skipVerify(s *Spec) error {
	if s.TLS && o.has("skip_verify") {
		s.SkipVerify = o.bool("skip_verify")
	}
	return o.err
}

// unexpected is go-redis's error for the options nobody read, their names
// sorted; nil when every option was read.
func (o *queryOptions) unexpected() error {
	if len(o.q) == 0 {
		return nil
	}
	keys := make([]string, 0, len(o.q))
	for k := range o.q {
		keys = append(keys, k)
	}
	sortStrings(keys, func(a, b string) bool { return a < b })
	return errors.New("redis: unexpected option: " + strings.Join(keys, ", "))
}

// string returns the option's last value.
func (o *queryOptions) string(name string) string {
	vs := o.q[name]
	if len(vs) == 0 {
		return ""
	}
	delete(o.q, name)
	return vs[len(vs)-1]
}

func (o *queryOptions) int(name string) {
	s := o.string(name)
	if s == "" {
		return
	}
	if _, err := strconv.Atoi(s); err != nil && o.err == nil {
		o.err = errors.New("redis: invalid " + name + " number: " + err.Error())
	}
}

func (o *queryOptions) duration(name string) {
	s := o.string(name)
	if s == "" {
		return
	}
	if _, err := strconv.Atoi(s); err == nil {
		return // seconds
	}
	if _, err := time.ParseDuration(s); err != nil && o.err == nil {
		o.err = errors.New("redis: invalid " + name + " duration: " + err.Error())
	}
}

func (o *queryOptions) bool(name string) bool {
	switch s := o.string(name); s {
	case "true", "1":
		return true
	case "false", "0", "":
		return false
	default:
		if o.err == nil {
			o.err = errors.New("redis: invalid " + name + " boolean: expected true/false/1/0 or an empty string, got " + strconv.Quote(s))
		}
		return false
	}
}

// setupConnParams is go-redis's: the query options, checked in its order
// (which decides the error reported when several are bad).
func setupConnParams(u parsedURL, s Spec) (Spec, error) {
	q := queryOptions{q: parseQuery(u.rawQuery)}

	if tmp := q.string("db"); tmp != "" {
		db, err := strconv.Atoi(tmp)
		if err != nil {
			return Spec{}, errors.New("redis: invalid database number: " + err.Error())
		}
		s.DB = db
	}

	q.int("protocol")
	s.ClientName = q.string("client_name")
	q.poolOptions()
	q.int("pipeline_pool_size")
	q.int("pipeline_read_buffer_size")
	q.int("pipeline_write_buffer_size")
	if q.has("conn_max_idle_time") {
		q.duration("conn_max_idle_time")
	} else {
		q.duration("idle_timeout")
	}
	if q.has("conn_max_lifetime") {
		q.duration("conn_max_lifetime")
	} else {
		q.duration("max_conn_age")
	}
	if q.has("conn_max_lifetime_jitter") {
		q.duration("conn_max_lifetime_jitter")
	}
	if err := q.skipVerify(&s); err != nil {
		return Spec{}, err
	}

	if err := q.unexpected(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// sortStrings is a stable merge sort: neither slices nor sort is linked
// into liblock.wasm so far.
func sortStrings(a []string, less func(a, b string) bool) {
	if len(a) < 2 {
		return
	}
	mid := len(a) / 2
	sortStrings(a[:mid], less)
	sortStrings(a[mid:], less)
	merged := make([]string, 0, len(a))
	i, j := 0, mid
	for i < mid && j < len(a) {
		if less(a[j], a[i]) {
			merged = append(merged, a[j])
			j++
		} else {
			merged = append(merged, a[i])
			i++
		}
	}
	merged = append(merged, a[i:mid]...)
	merged = append(merged, a[j:]...)
	copy(a, merged)
}
