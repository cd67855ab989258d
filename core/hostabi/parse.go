package hostabi

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/liblock/liblock/core/engine"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// The JSON accepted by lock_client_new, lock_engine_new and the acquire
// options is parsed strictly: a JSON object, each key exactly one of the
// documented names (case matters, no duplicates), each value of its
// documented type (an integer is written without fraction or exponent; null
// is never a value), and nothing after the object. Both liblock.so (capi)
// and liblock.wasm parse with this code.

// MaxJSONLength bounds the JSON text a caller may pass (1 MiB).
const MaxJSONLength = 1 << 20

// Config is a parsed configuration JSON: its values checked one by one, the
// node URLs not parsed yet (Engine parses them, and capi's core.Config
// validates them itself).
type Config struct {
	Nodes       []string
	NodeTimeout time.Duration // 0: the default
	DriftFactor *float64      // nil: the default; 0 means no drift allowance
	KeyPrefix   string
	Owner       string
	// NodeTLS holds the TLS keys of the nodes given as objects with some
	// (lock_client_new only), by index in Nodes.
	NodeTLS map[int]TLSFiles
	// WaitReplicas: wait_replicas, nil when absent (the default).
	WaitReplicas *int
	// Report: report, the engine's REPORT actions (engine.Config.Report);
	// false when absent.
	Report bool
}

// Engine resolves the node URLs (engine.ParseNodes) and validates the whole
// configuration.
func (c Config) Engine() (engine.Config, error) {
	nodes, err := engine.ParseNodes(c.Nodes)
	if err != nil {
		return engine.Config{}, err
	}
	cfg := engine.Config{Nodes: nodes, NodeTimeout: c.NodeTimeout, DriftFactor: c.DriftFactor, KeyPrefix: c.KeyPrefix, Owner: c.Owner, WaitReplicas: c.WaitReplicas, Report: c.Report}
	if err := cfg.Validate(); err != nil {
		return engine.Config{}, err
	}
	return cfg, nil
}

// AcquireOptions is the parsed options JSON of an acquire.
type AcquireOptions struct {
	Wait       time.Duration
	AutoExtend bool
	Token      string // "": a random token
	Fence      bool
	Permits    int // a semaphore's permit count (key "permits"); 0: the mutex
	// Mode: "mode": "read" or "write", a side of the read-write lock.
	Mode engine.LockMode
	// Resources: a multi-resource lock's further resources (the key
	// "resources"; multi.go), nil for a mutex.
	Resources []string
}

// argErr is the *engine.ArgumentError for arg. Reasons are built with
// strconv, not fmt: fmt (with reflect) would add ≈ 190 KB to liblock.wasm.
func argErr(arg, reason string) error { return engine.InvalidArg(arg, reason) }

func nodeArg(i int) string { return "nodes[" + strconv.Itoa(i) + "]" }

// parseObject walks one JSON object, handing each value to its field's
// function. Unknown and duplicate keys, malformed JSON, a non-object and
// trailing data are errors naming what (e.g. "config").
func parseObject(what, s string, fields map[string]func(v jvalue) error) error {
	if len(s) > MaxJSONLength {
		return argErr(what, "longer than "+strconv.Itoa(MaxJSONLength)+" bytes")
	}
	if !utf8.ValidString(s) {
		// A lenient decoder would turn bad bytes into U+FFFD, changing a
		// key prefix or a URL behind the caller's back.
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
	return walkMembers(what, "", members, fields)
}

// walkMembers hands each member to its field's function; prefix is put
// before the keys in errors ("nodes[1]." for a node object's).
func walkMembers(what, prefix string, members []jfield, fields map[string]func(v jvalue) error) error {
	seen := make(map[string]bool, len(members))
	for _, m := range members {
		f, known := fields[m.key]
		if !known {
			if prefix != "" {
				return argErr(prefix+m.key, "unknown key")
			}
			return argErr(what, "unknown key "+strconv.Quote(m.key))
		}
		if seen[m.key] {
			return argErr(what, "duplicate key "+strconv.Quote(prefix+m.key))
		}
		seen[m.key] = true
		if m.val.kind == jNull {
			return argErr(prefix+m.key, "must not be null")
		}
		if err := f(m.val); err != nil {
			return err
		}
	}
	return nil
}

// parseNode reads one item of nodes: a URL string, or an object with "url"
// and, for lock_client_new (t not nil), the node's own TLS keys.
func parseNode(i int, v jvalue, t *TLSFiles) (string, error) {
	if v.kind != jObject {
		if v.kind != jString {
			return "", argErr(nodeArg(i), "must be a URL string or an object with \"url\"")
		}
		return v.s, nil
	}
	prefix := nodeArg(i) + "."
	url, haveURL := "", false
	fields := map[string]func(jvalue) error{
		"url": func(v jvalue) error {
			var err error
			url, err = parseString(prefix+"url", v)
			haveURL = true
			return err
		},
	}
	if t != nil {
		tlsFields(prefix, t, fields)
	}
	if err := walkMembers(nodeArg(i), prefix, v.obj, fields); err != nil {
		return "", err
	}
	if !haveURL {
		return "", argErr(prefix+"url", "required")
	}
	return url, nil
}

// tlsFields adds the TLS keys to fields, read into t.
func tlsFields(prefix string, t *TLSFiles, fields map[string]func(jvalue) error) {
	for key, dst := range map[string]*string{"tls_ca_file": &t.CAFile, "tls_cert_file": &t.CertFile,
		"tls_key_file": &t.KeyFile, "tls_server_name": &t.ServerName} {
		fields[key] = func(v jvalue) error {
			var err error
			*dst, err = parseString(prefix+key, v)
			return err
		}
	}
}

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == "" && (s == "0" || s[0] != '0')
}

// parseInteger reads a JSON integer (one too large for an int64 is read as
// the int64 nearest it: out of every range, which the engine then says).
func parseInteger(key string, v jvalue, what string) (int64, error) {
	if v.kind != jNumber || !isInteger(v.s) {
		return 0, argErr(key, what)
	}
	if v.s == "-0" {
		return 0, argErr(key, "must not be negative")
	}
	n, _ := strconv.ParseInt(v.s, 10, 64) // ErrRange: n is ±MaxInt64
	return n, nil
}

func parseString(key string, v jvalue) (string, error) {
	if v.kind != jString {
		return "", argErr(key, "must be a string")
	}
	return v.s, nil
}

// TLSFiles are the TLS keys of lock_client_new's configuration JSON
// (tls_ca_file, tls_cert_file, tls_key_file, tls_server_name): paths of PEM
// files the Go driver reads, and a server name to verify. lock_engine_new
// has none of them: its host builds its TLS connections itself.
type TLSFiles struct {
	CAFile, CertFile, KeyFile, ServerName string
}

// ParseConfig parses a configuration JSON (keys nodes, node_timeout_ms,
// drift_factor, key_prefix, owner, wait_replicas). It checks each value's type and range; the
// node URLs themselves are checked by whoever resolves them (Config.Engine).
func ParseConfig(s string) (Config, error) {
	return parseConfig(s, nil)
}

// ParseClientConfig is ParseConfig for lock_client_new: the TLS keys too.
// A key given as "" is the same as a key not given.
func ParseClientConfig(s string) (Config, TLSFiles, error) {
	var t TLSFiles
	cfg, err := parseConfig(s, &t)
	if err != nil {
		return Config{}, TLSFiles{}, err
	}
	return cfg, t, nil
}

func parseConfig(s string, t *TLSFiles) (Config, error) {
	var cfg Config
	haveNodes := false
	fields := map[string]func(jvalue) error{
		"nodes": func(v jvalue) error {
			if v.kind != jArray {
				return argErr("nodes", "must be an array of node URLs (or node objects)")
			}
			if len(v.arr) > engine.MaxNodes {
				return argErr("nodes", "at most "+strconv.Itoa(engine.MaxNodes)+" nodes, got "+strconv.Itoa(len(v.arr)))
			}
			cfg.Nodes = make([]string, 0, len(v.arr))
			for i, it := range v.arr {
				var nt *TLSFiles
				if t != nil {
					nt = new(TLSFiles)
				}
				u, err := parseNode(i, it, nt)
				if err != nil {
					return err
				}
				cfg.Nodes = append(cfg.Nodes, u)
				if nt != nil && *nt != (TLSFiles{}) {
					if cfg.NodeTLS == nil {
						cfg.NodeTLS = make(map[int]TLSFiles)
					}
					cfg.NodeTLS[i] = *nt
				}
			}
			haveNodes = true
			return nil
		},
		// Each value's range is the engine's (Config.ValidateOptions), the
		// one check; here only its JSON type, and that 0 is not a timeout.
		"node_timeout_ms": func(v jvalue) error {
			ms, err := parseInteger("node_timeout_ms", v, "must be an integer number of milliseconds")
			if err != nil {
				return err
			}
			if ms == 0 {
				return argErr("node_timeout_ms", "must be > 0")
			}
			cfg.NodeTimeout = durationOf(ms)
			return cArg(engine.Config{NodeTimeout: cfg.NodeTimeout}.ValidateOptions(), ms)
		},
		"drift_factor": func(v jvalue) error {
			if v.kind != jNumber {
				return argErr("drift_factor", "must be a number")
			}
			f, err := strconv.ParseFloat(v.s, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return argErr("drift_factor", "must be a number")
			}
			cfg.DriftFactor = &f
			return engine.Config{DriftFactor: &f}.ValidateOptions()
		},
		"key_prefix": func(v jvalue) error {
			p, err := parseString("key_prefix", v)
			if err == nil {
				err = engine.Config{KeyPrefix: p}.ValidateOptions()
			}
			cfg.KeyPrefix = p
			return err
		},
		"wait_replicas": func(v jvalue) error {
			n, err := parseInteger("wait_replicas", v, "must be an integer: replicas that must acknowledge each grant (0: off)")
			if err != nil {
				return err
			}
			w := int(max(min(n, math.MaxInt32), math.MinInt32)) // out of range either way
			cfg.WaitReplicas = &w
			return engine.Config{WaitReplicas: &w}.ValidateOptions()
		},
		"report": func(v jvalue) error {
			if v.kind != jBool {
				return argErr("report", "must be true or false: whether the engine emits REPORT actions (metrics, traces, logs)")
			}
			cfg.Report = v.b
			return nil
		},
		"owner": func(v jvalue) error {
			o, err := parseString("owner", v)
			if err == nil {
				err = engine.Config{Owner: o}.ValidateOptions()
			}
			cfg.Owner = o
			return err
		},
	}
	if t != nil {
		tlsFields("", t, fields)
	}
	err := parseObject("config", s, fields)
	if err != nil {
		return Config{}, err
	}
	if !haveNodes {
		return Config{}, argErr("nodes", "required: an array of at least one node URL")
	}
	return cfg, nil
}

// ParseOptions parses an acquire's options JSON (keys wait_ms,
// auto_extend, token, fence, mode); isNull stands for a NULL pointer (all defaults).
func ParseOptions(s string, isNull bool) (AcquireOptions, error) {
	var o AcquireOptions
	if isNull {
		return o, nil
	}
	err := parseObject("options", s, map[string]func(jvalue) error{
		"wait_ms": func(v jvalue) error {
			ms, err := parseInteger("wait_ms", v, "must be an integer number of milliseconds")
			if err == nil {
				o.Wait, err = WaitFromMillis(ms)
			}
			return err
		},
		"auto_extend": func(v jvalue) error {
			if v.kind != jBool {
				return argErr("auto_extend", "must be true or false")
			}
			o.AutoExtend = v.b
			return nil
		},
		"token": func(v jvalue) error {
			t, err := parseString("token", v)
			if err == nil && (len(t) < engine.MinToken || len(t) > engine.MaxToken) {
				err = argErr("token", "must be "+strconv.Itoa(engine.MinToken)+" to "+strconv.Itoa(engine.MaxToken)+" bytes, got "+strconv.Itoa(len(t)))
			}
			o.Token = t
			return err
		},
		"resources": func(v jvalue) error {
			r, err := parseResources(v)
			o.Resources = r
			return err
		},
		"fence": func(v jvalue) error {
			if v.kind != jBool {
				return argErr("fence", "must be true or false")
			}
			o.Fence = v.b
			return nil
		},
		"permits": func(v jvalue) error {
			n, err := ParsePermits(v)
			o.Permits = n
			return err
		},
		"mode": func(v jvalue) error {
			m, err := ParseMode(v)
			o.Mode = m
			return err
		},
	})
	if err != nil {
		return AcquireOptions{}, err
	}
	if o.Fence && o.Token != "" {
		return AcquireOptions{}, argErr("fence", "not with a caller's token")
	}
	if o.Mode != engine.ModeExclusive && o.Token != "" {
		return AcquireOptions{}, argErr("mode", "a read-write lock does not take a caller's token")
	}
	return o, nil
}

// ParsePermits parses a "permits" value: an integer from 1 to
// engine.MaxPermits (a semaphore's permit count).
func ParsePermits(v jvalue) (int, error) {
	if v.kind != jNumber || !isInteger(v.s) {
		return 0, argErr("permits", "must be an integer from 1 to "+strconv.Itoa(engine.MaxPermits))
	}
	n, err := strconv.ParseInt(v.s, 10, 64)
	if err != nil || n < 1 || n > engine.MaxPermits {
		return 0, argErr("permits", "must be 1 to "+strconv.Itoa(engine.MaxPermits)+", got "+v.s)
	}
	return int(n), nil
}

// ParseInspectOptions parses an inspection's options JSON (lock_inspect_ex):
// the key "permits" inspects the semaphore of that many permits, "mode"
// ("read" or "write", either) the read-write lock; NULL or {} the mutex.
func ParseInspectOptions(s string, isNull bool) (permits int, mode engine.LockMode, err error) {
	if isNull {
		return 0, 0, nil
	}
	err = parseObject("options", s, map[string]func(jvalue) error{
		"permits": func(v jvalue) error {
			n, err := ParsePermits(v)
			permits = n
			return err
		},
		"mode": func(v jvalue) error {
			m, err := ParseMode(v)
			mode = m
			return err
		},
	})
	if err != nil {
		return 0, 0, err
	}
	if permits != 0 && mode != engine.ModeExclusive {
		return 0, 0, argErr("mode", "not with permits: a read-write lock and a semaphore are two different locks")
	}
	return permits, mode, nil
}

// TTLFromMillis converts a ttl in milliseconds (the C ABI's ttl_ms) and
// checks it with the engine's check, the one range check of a ttl; its
// error names ttl_ms (cArg).
func TTLFromMillis(ms int64) (time.Duration, error) {
	return fromMillis(ms, engine.CheckTTL)
}

// WaitFromMillis does the same for a wait budget (wait_ms).
func WaitFromMillis(ms int64) (time.Duration, error) {
	return fromMillis(ms, engine.CheckWait)
}

// PollFromMillis does the same for a watch's poll interval (poll_ms).
func PollFromMillis(ms int64) (time.Duration, error) {
	return fromMillis(ms, engine.CheckPoll)
}

func fromMillis(ms int64, check func(time.Duration) error) (time.Duration, error) {
	d := durationOf(ms)
	if err := check(d); err != nil {
		return 0, cArg(err, ms)
	}
	return d, nil
}

// durationOf is ms milliseconds, saturated where a Duration cannot hold
// them: converted as is, a huge value would wrap into range, and the
// engine's check must see it out of range.
func durationOf(ms int64) time.Duration {
	const most = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case ms > most:
		return math.MaxInt64
	case ms < -most:
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// cArg is err as the host protocol and the C ABI say it: an
// *engine.ArgumentError names its argument by the spec's C/JSON name
// (ttl_ms, wait_ms, poll_ms: cArgNames, generated) and words a crossed
// bound in the spec's units, with the value given (ms, which a saturated
// Duration no longer holds). Each binding then names its own parameter from
// the spec's tables. Other errors are returned as they are.
func cArg(err error, given int64) error {
	ae, ok := err.(*engine.ArgumentError)
	if !ok {
		return err
	}
	e := *ae
	if c, ok := cArgNames[e.Arg]; ok {
		e.Arg = c
	}
	if e.Bound != "" && e.Unit == "ms" {
		e.Got = given
		word := "at most "
		if e.Bound == engine.BoundMin {
			word = "at least "
		}
		e.Reason = "must be " + word + strconv.FormatInt(e.Limit, 10) + " ms, got " + strconv.FormatInt(given, 10)
	}
	return &e
}
