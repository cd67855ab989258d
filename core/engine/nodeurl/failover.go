package nodeurl

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel node URLs: a node that is the primary of a Sentinel-managed
// deployment, found by asking its sentinels. A node URL is one when its
// query has master_name; it is then read exactly as go-redis v9.23.0's
// redis.ParseFailoverURL reads it (same accepted set, same fields, the same
// messages), with three refusals of liblock's own (see below):
//
//	redis://[s_user[:s_password]@]sentinel1[:port][/db]?master_name=NAME[&addr=sentinel2:port...][&username=U][&password=P][&options]
//	rediss://...   (TLS to the sentinels and to the primary)
//
// As in go-redis, the URL's host is the first sentinel and every addr= names
// one more; the URL's user and password are the sentinels' credentials
// (go-redis's SentinelUsername/SentinelPassword), and the primary's own
// credentials are the username= and password= options. db, client_name
// and skip_verify are the primary's, as in a plain node URL. There is no
// unix:// form (go-redis has none).
//
// liblock refuses what would send a lock command anywhere but the primary,
// or name nobody: an empty master_name, replica_only=true,
// route_by_latency=true and route_randomly=true (go-redis reads them and
// would route reads to replicas; a lock is a write).

// IsFailover reports whether raw is a Sentinel node URL (its query has
// master_name), without checking the rest of it.
func IsFailover(raw string) bool {
	u, err := parseURL(raw)
	if err != nil {
		return false
	}
	_, ok := parseQuery(u.rawQuery)["master_name"]
	return ok
}

// parseFailover is redis.ParseFailoverURL, read into a Spec, plus
// liblock's refusals.
func parseFailover(u parsedURL) (Spec, error) {
	s := Spec{Network: "tcp", SentinelUsername: u.username, SentinelPassword: u.password}

	h, addr := hostPortWithDefaults(u.host)
	s.Sentinels = append(s.Sentinels, addr)

	switch u.scheme {
	case "rediss":
		s.TLS, s.ServerName = true, h
	case "redis":
	default:
		return Spec{}, errors.New("redis: invalid URL scheme: " + u.scheme)
	}

	db, err := pathDB(u.path)
	if err != nil {
		return Spec{}, err
	}
	s.DB = db

	q := queryOptions{q: parseQuery(u.rawQuery)}
	s.MasterName = q.string("master_name")
	s.ClientName = q.string("client_name")
	byLatency := q.bool("route_by_latency")
	q.duration("route_by_latency_tolerance")
	randomly := q.bool("route_randomly")
	replicaOnly := q.bool("replica_only")
	q.bool("use_disconnected_replicas")
	q.int("protocol")
	s.Username = q.string("username")
	s.Password = q.string("password")
	q.int("max_retries")
	q.duration("min_retry_backoff")
	q.duration("max_retry_backoff")
	q.duration("dial_timeout")
	q.int("dialer_retries")
	q.duration("dialer_retry_timeout")
	q.duration("read_timeout")
	q.duration("write_timeout")
	q.bool("context_timeout_enabled")
	q.bool("pool_fifo")
	q.int("pool_size")
	q.int("max_concurrent_dials")
	q.int("min_idle_conns")
	q.int("max_idle_conns")
	q.int("max_active_conns")
	q.int("pipeline_pool_size")
	q.int("pipeline_read_buffer_size")
	q.int("pipeline_write_buffer_size")
	q.duration("conn_max_lifetime")
	if q.has("conn_max_lifetime_jitter") {
		q.duration("conn_max_lifetime_jitter")
	}
	q.duration("conn_max_idle_time")
	q.duration("pool_timeout")
	q.bool("disableIdentity")
	q.string("identitySuffix")
	q.bool("unstable_resp3")
	if q.err != nil {
		return Spec{}, q.err
	}

	if tmp := q.string("db"); tmp != "" {
		db, err := strconv.Atoi(tmp)
		if err != nil {
			return Spec{}, errors.New("redis: invalid database number: " + err.Error())
		}
		s.DB = db
	}

	addrs, err := q.addrs()
	if err != nil {
		return Spec{}, err
	}
	s.Sentinels = append(s.Sentinels, addrs...)

	if err := q.skipVerify(&s); err != nil {
		return Spec{}, err
	}
	if err := q.unexpected(); err != nil {
		return Spec{}, err
	}

	// liblock's own refusals, after everything go-redis checks.
	switch {
	case s.MasterName == "":
		return Spec{}, errors.New("redis: master_name: empty; write the name the sentinels know the primary by (master_name=mymaster)")
	case replicaOnly:
		return Spec{}, errors.New("redis: replica_only: a lock is a write; liblock sends lock commands to the primary only (drop replica_only)")
	case byLatency:
		return Spec{}, errors.New("redis: route_by_latency: a lock is a write; liblock sends lock commands to the primary only (drop route_by_latency)")
	case randomly:
		return Spec{}, errors.New("redis: route_randomly: a lock is a write; liblock sends lock commands to the primary only (drop route_randomly)")
	}
	// Defaults were given the sentinels' host port by go-redis, which a
	// reader might mistake: the Addr of a Sentinel node is its first
	// sentinel (where resolution starts).
	s.Addr = s.Sentinels[0]
	return s, nil
}

// strings returns every value of the option and removes it.
func (o *queryOptions) strings(name string) []string {
	vs := o.q[name]
	delete(o.q, name)
	return vs
}

// addrs reads the addr options (a Sentinel URL's further sentinels, a
// cluster URL's further seeds), each a host:port, as go-redis does: split,
// then joined again (net.JoinHostPort), so "[h]:1" with a host that needs
// no brackets reads as "h:1".
func (o *queryOptions) addrs() ([]string, error) {
	var out []string
	for _, addr := range o.strings("addr") {
		h, p, err := splitHostPortStrict(addr)
		if err != nil || h == "" || p == "" {
			return nil, errors.New("redis: unable to parse addr param: " + addr)
		}
		if strings.IndexByte(h, ':') >= 0 {
			out = append(out, "["+h+"]:"+p)
		} else {
			out = append(out, h+":"+p)
		}
	}
	return out, nil
}

// splitHostPortStrict is net.SplitHostPort.
func splitHostPortStrict(hostport string) (host, port string, err error) {
	addrErr := func(why string) (string, string, error) {
		return "", "", errors.New("address " + hostport + ": " + why)
	}
	j, k := 0, 0
	i := strings.LastIndexByte(hostport, ':')
	if i < 0 {
		return addrErr("missing port in address")
	}
	if hostport[0] == '[' {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return addrErr("missing ']' in address")
		}
		switch end + 1 {
		case len(hostport):
			return addrErr("missing port in address")
		case i:
		default:
			if hostport[end+1] == ':' {
				return addrErr("too many colons in address")
			}
			return addrErr("missing port in address")
		}
		host = hostport[1:end]
		j, k = 1, end+1
	} else {
		host = hostport[:i]
		if strings.IndexByte(host, ':') >= 0 {
			return addrErr("too many colons in address")
		}
	}
	if strings.IndexByte(hostport[j:], '[') >= 0 {
		return addrErr("unexpected '[' in address")
	}
	if strings.IndexByte(hostport[k:], ']') >= 0 {
		return addrErr("unexpected ']' in address")
	}
	return host, hostport[i+1:], nil
}

// redactQueryPassword replaces the value of every password= option of
// raw's query (a Sentinel URL's primary password) with "xxxxx".
func redactQueryPassword(raw string) string {
	q := strings.IndexByte(raw, '?')
	if q < 0 {
		return raw
	}
	end := len(raw)
	if h := strings.IndexByte(raw[q:], '#'); h >= 0 {
		end = q + h
	}
	pairs := strings.Split(raw[q+1:end], "&")
	changed := false
	for i, p := range pairs {
		k, _, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if key, err := unescape(k, encodeQueryComponent); err == nil && key == "password" {
			pairs[i] = k + "=xxxxx"
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return raw[:q+1] + strings.Join(pairs, "&") + raw[end:]
}
