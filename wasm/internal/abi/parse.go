// Package abi is what the liblock wasm module and its hosts share: status
// codes, the error record, the parsing of the C ABI's config and options
// JSON (the same keys, checks and argument names as capi/parse.go), and the
// module's side of the msgpack host call. It must stay small: the module
// links it, and neither encoding/json nor a reflection-based msgpack fits in
// the module's 3 MiB budget. See wasm/PROTOCOL.md.
package abi

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/liblock/liblock/core"
)

// The JSON accepted by lock_client_new and lock_acquire is parsed strictly:
// a JSON object, each key exactly one of the documented names (case
// matters, no duplicates), each value of its documented type (an integer is
// written without fraction or exponent; null is never a value), and nothing
// after the object.

// MaxJSONLength bounds the JSON text a caller may pass (1 MiB).
const MaxJSONLength = 1 << 20

// AcquireOptions is the parsed options JSON of an acquire.
type AcquireOptions struct {
	Wait       time.Duration
	AutoExtend bool
}

// CoreOptions returns the options as core.AcquireOption values.
func (o AcquireOptions) CoreOptions() []core.AcquireOption {
	var opts []core.AcquireOption
	if o.Wait > 0 {
		opts = append(opts, core.Wait(o.Wait))
	}
	if o.AutoExtend {
		opts = append(opts, core.AutoExtend())
	}
	return opts
}

// argErr is the ArgumentError for arg. Reasons are built with strconv, not
// fmt: fmt (with reflect) would add ≈ 190 KB to the module (wasm/README.md).
func argErr(arg, reason string) error {
	return &core.ArgumentError{Arg: arg, Reason: reason}
}

// nodeArg names the i-th node URL: "nodes[i]".
func nodeArg(i int) string { return "nodes[" + strconv.Itoa(i) + "]" }

// parseObject walks one JSON object, handing each value to its field's
// function. Unknown and duplicate keys, malformed JSON, a non-object and
// trailing data are errors naming what (e.g. "config").
func parseObject(what, s string, fields map[string]func(v jvalue) error) error {
	if len(s) > MaxJSONLength {
		return argErr(what, "longer than "+strconv.Itoa(MaxJSONLength)+" bytes")
	}
	if !utf8.ValidString(s) {
		return argErr(what, "not valid UTF-8")
	}
	members, err := parseJSONObject(s)
	switch err {
	case nil:
	case errNotObject:
		return argErr(what, "must be a JSON object")
	default:
		return argErr(what, "malformed JSON: "+err.Error())
	}
	seen := map[string]bool{}
	for _, m := range members {
		f, known := fields[m.key]
		if !known {
			return argErr(what, "unknown key "+strconv.Quote(m.key))
		}
		if seen[m.key] {
			return argErr(what, "duplicate key "+strconv.Quote(m.key))
		}
		seen[m.key] = true
		if m.val.kind == jNull {
			return argErr(m.key, "must not be null")
		}
		if err := f(m.val); err != nil {
			return err
		}
	}
	return nil
}

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == "" && (s == "0" || s[0] != '0')
}

// parseMillis reads a non-negative JSON integer of milliseconds, at most max.
func parseMillis(key string, v jvalue, max time.Duration) (time.Duration, error) {
	if v.kind != jNumber || !isInteger(v.s) {
		return 0, argErr(key, "must be an integer number of milliseconds")
	}
	if v.s[0] == '-' {
		return 0, argErr(key, "must not be negative")
	}
	n, err := strconv.ParseInt(v.s, 10, 64)
	if err != nil || n > max.Milliseconds() {
		return 0, argErr(key, "must be at most "+strconv.FormatInt(max.Milliseconds(), 10)+" ms")
	}
	return time.Duration(n) * time.Millisecond, nil
}

func parseString(key string, v jvalue) (string, error) {
	if v.kind != jString {
		return "", argErr(key, "must be a string")
	}
	return v.s, nil
}

// ParseConfig parses a client's config JSON (the C ABI's keys: nodes,
// node_timeout_ms, drift_factor, key_prefix) and validates the result.
func ParseConfig(s string) (core.Config, error) {
	var cfg core.Config
	haveNodes := false
	err := parseObject("config", s, map[string]func(jvalue) error{
		"nodes": func(v jvalue) error {
			if v.kind != jArray {
				return argErr("nodes", "must be an array of strings")
			}
			if len(v.arr) > core.MaxNodes {
				return argErr("nodes", "at most "+strconv.Itoa(core.MaxNodes)+" nodes, got "+strconv.Itoa(len(v.arr)))
			}
			cfg.Nodes = make([]string, 0, len(v.arr))
			for i, it := range v.arr {
				u, err := parseString(nodeArg(i), it)
				if err != nil {
					return err
				}
				cfg.Nodes = append(cfg.Nodes, u)
			}
			haveNodes = true
			return nil
		},
		"node_timeout_ms": func(v jvalue) error {
			d, err := parseMillis("node_timeout_ms", v, core.MaxNodeTimeout)
			if err != nil {
				return err
			}
			if d == 0 {
				return argErr("node_timeout_ms", "must be > 0")
			}
			cfg.NodeTimeout = d
			return nil
		},
		"drift_factor": func(v jvalue) error {
			if v.kind != jNumber {
				return argErr("drift_factor", "must be a number")
			}
			f, err := strconv.ParseFloat(v.s, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return argErr("drift_factor", "must be a number")
			}
			if f < 0 || f > core.MaxDriftFactor {
				return argErr("drift_factor", "must be between 0 and "+strconv.FormatFloat(core.MaxDriftFactor, 'g', -1, 64)+", got "+strconv.FormatFloat(f, 'g', -1, 64))
			}
			cfg.DriftFactor = &f // 0 means no drift allowance, not the default
			return nil
		},
		"key_prefix": func(v jvalue) error {
			p, err := parseString("key_prefix", v)
			cfg.KeyPrefix = p
			return err
		},
	})
	if err != nil {
		return core.Config{}, err
	}
	if !haveNodes {
		return core.Config{}, argErr("nodes", "required: an array of at least one node URL")
	}
	if err := cfg.Validate(); err != nil {
		return core.Config{}, err
	}
	// The native library's go-redis also rejects a database that is not a
	// number; the module has no go-redis, so it checks that here.
	for i, raw := range cfg.Nodes {
		if err := checkDB(raw); err != nil {
			return core.Config{}, argErr(nodeArg(i), err.Error())
		}
	}
	return cfg, nil
}

// ParseOptions parses an acquire's options JSON; isNull stands for a NULL
// pointer (all defaults).
func ParseOptions(s string, isNull bool) (AcquireOptions, error) {
	var o AcquireOptions
	if isNull {
		return o, nil
	}
	err := parseObject("options", s, map[string]func(jvalue) error{
		"wait_ms": func(v jvalue) error {
			d, err := parseMillis("wait_ms", v, core.MaxWait)
			o.Wait = d
			return err
		},
		"auto_extend": func(v jvalue) error {
			if v.kind != jBool {
				return argErr("auto_extend", "must be true or false")
			}
			o.AutoExtend = v.b
			return nil
		},
	})
	if err != nil {
		return AcquireOptions{}, err
	}
	return o, nil
}

// TTLFromMillis checks an int64 ttl in milliseconds before converting it, so
// that huge values cannot overflow time.Duration.
func TTLFromMillis(ms int64) (time.Duration, error) {
	if ms < core.MinTTL.Milliseconds() || ms > core.MaxTTL.Milliseconds() {
		return 0, argErr("ttl_ms", "must be between "+strconv.FormatInt(core.MinTTL.Milliseconds(), 10)+" and "+strconv.FormatInt(core.MaxTTL.Milliseconds(), 10)+", got "+strconv.FormatInt(ms, 10))
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// checkDB rejects a redis:// or rediss:// URL whose path is not a database
// number. Its message never repeats the URL. raw has passed
// core.Config.Validate.
func checkDB(raw string) error {
	scheme, _, path := nodeURLParts(raw)
	if scheme != "redis" && scheme != "rediss" {
		return nil
	}
	p := strings.TrimPrefix(path, "/")
	if p == "" {
		return nil
	}
	if n, err := strconv.Atoi(p); err != nil || n < 0 {
		return errors.New("invalid database number " + strconv.Quote(p))
	}
	return nil
}

// NodeAddr is a node URL's address without credentials, as go-redis names
// it: host:port (port 6379 by default), or the socket path of a unix URL.
// raw has passed core.Config.Validate.
func NodeAddr(raw string) string {
	scheme, host, path := nodeURLParts(raw)
	if scheme == "unix" {
		return path
	}
	hostname, port := host, ""
	if colon := strings.LastIndexByte(host, ':'); colon != -1 && isPort(host[colon+1:]) {
		hostname, port = host[:colon], host[colon+1:]
	}
	if port == "" {
		if strings.HasPrefix(hostname, "[") && strings.HasSuffix(hostname, "]") {
			hostname = hostname[1 : len(hostname)-1]
		}
		return hostname + ":6379"
	}
	return host
}

// nodeURLParts reads, from a URL that core.Config.Validate accepted (so
// url.Parse accepts it and its scheme is redis, rediss or unix), what
// url.Parse would put in Scheme, Host and Path. It does not use net/url,
// which with net/netip would add about 200 KB to the module (core checks
// the URL with a net/url-equivalent parser of its own on wasip1).
func nodeURLParts(raw string) (scheme, host, path string) {
	s, _, _ := strings.Cut(raw, "#")
	s, _, _ = strings.Cut(s, "?")
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", ""
	}
	scheme = strings.ToLower(scheme)
	if !strings.HasPrefix(rest, "/") {
		return scheme, "", "" // opaque
	}
	if strings.HasPrefix(rest, "//") {
		authority := rest[2:]
		rest = ""
		if i := strings.IndexByte(authority, '/'); i >= 0 {
			authority, rest = authority[:i], authority[i:]
		}
		host = percentDecode(authority[strings.LastIndex(authority, "@")+1:])
	}
	return scheme, host, percentDecode(rest)
}

// isPort reports whether s is empty or all digits.
func isPort(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// percentDecode decodes the %XX escapes of a string url.Parse accepted.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}
