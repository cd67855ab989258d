package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/liblock/liblock/core"
)

// The JSON accepted by lock_client_new and the acquire functions is parsed
// strictly: a JSON object, each key exactly one of the documented names (case
// matters, no duplicates), each value of its documented type (an integer is
// written without fraction or exponent; null is never a value), and nothing
// after the object. encoding/json's own struct decoding is not used for the
// keys because it matches them case-insensitively ("Nodes" would pass).

// maxJSONLength bounds the JSON text a caller may pass (1 MiB).
const maxJSONLength = 1 << 20

// acquireOptions is the parsed options_json of an acquire.
type acquireOptions struct {
	Wait       time.Duration
	AutoExtend bool
}

func (o acquireOptions) coreOptions() []core.AcquireOption {
	var opts []core.AcquireOption
	if o.Wait > 0 {
		opts = append(opts, core.Wait(o.Wait))
	}
	if o.AutoExtend {
		opts = append(opts, core.AutoExtend())
	}
	return opts
}

func argErr(arg, format string, a ...any) error {
	return &core.ArgumentError{Arg: arg, Reason: fmt.Sprintf(format, a...)}
}

var integerRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

var jsonNull = []byte("null")

// parseObject walks one JSON object, handing each value to its field's
// function. Unknown and duplicate keys, malformed JSON, a non-object and
// trailing data are errors naming what (e.g. "config").
func parseObject(what, s string, fields map[string]func(raw []byte) error) error {
	if len(s) > maxJSONLength {
		return argErr(what, "longer than %d bytes", maxJSONLength)
	}
	if !utf8.ValidString(s) {
		// encoding/json would silently turn bad bytes into U+FFFD, changing
		// a key prefix or a URL behind the caller's back.
		return argErr(what, "not valid UTF-8")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return argErr(what, "malformed JSON: %v", jsonMsg(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return argErr(what, "must be a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return argErr(what, "malformed JSON: %v", jsonMsg(err))
		}
		key, ok := tok.(string)
		if !ok {
			return argErr(what, "malformed JSON: expected a key")
		}
		f, known := fields[key]
		if !known {
			return argErr(what, "unknown key %q", key)
		}
		if seen[key] {
			return argErr(what, "duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return argErr(what, "malformed JSON: %v", jsonMsg(err))
		}
		raw = bytes.TrimSpace(raw)
		if bytes.Equal(raw, jsonNull) {
			return argErr(key, "must not be null")
		}
		if err := f(raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return argErr(what, "malformed JSON: %v", jsonMsg(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return argErr(what, "malformed JSON: data after the object")
	}
	return nil
}

func jsonMsg(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

// parseMillis reads a non-negative JSON integer of milliseconds, at most max.
func parseMillis(key string, raw []byte, max time.Duration) (time.Duration, error) {
	if !integerRE.Match(raw) {
		return 0, argErr(key, "must be an integer number of milliseconds")
	}
	if raw[0] == '-' {
		return 0, argErr(key, "must not be negative")
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > max.Milliseconds() {
		return 0, argErr(key, "must be at most %d ms", max.Milliseconds())
	}
	return time.Duration(n) * time.Millisecond, nil
}

func parseString(key string, raw []byte) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", argErr(key, "must be a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", argErr(key, "must be a string")
	}
	return s, nil
}

// parseConfig parses config_json (see liblock.h) and validates the result.
func parseConfig(s string) (core.Config, error) {
	var cfg core.Config
	haveNodes := false
	err := parseObject("config", s, map[string]func([]byte) error{
		"nodes": func(raw []byte) error {
			if raw[0] != '[' {
				return argErr("nodes", "must be an array of strings")
			}
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				return argErr("nodes", "must be an array of strings")
			}
			if len(items) > core.MaxNodes {
				return argErr("nodes", "at most %d nodes, got %d", core.MaxNodes, len(items))
			}
			cfg.Nodes = make([]string, 0, len(items))
			for i, it := range items {
				u, err := parseString(fmt.Sprintf("nodes[%d]", i), bytes.TrimSpace(it))
				if err != nil {
					return err
				}
				cfg.Nodes = append(cfg.Nodes, u)
			}
			haveNodes = true
			return nil
		},
		"node_timeout_ms": func(raw []byte) error {
			d, err := parseMillis("node_timeout_ms", raw, core.MaxNodeTimeout)
			if err != nil {
				return err
			}
			if d == 0 {
				return argErr("node_timeout_ms", "must be > 0")
			}
			cfg.NodeTimeout = d
			return nil
		},
		"drift_factor": func(raw []byte) error {
			if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
				return argErr("drift_factor", "must be a number")
			}
			var f float64
			if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return argErr("drift_factor", "must be a number")
			}
			if f < 0 || f > core.MaxDriftFactor {
				return argErr("drift_factor", "must be between 0 and %v, got %v", core.MaxDriftFactor, f)
			}
			cfg.DriftFactor = &f // 0 means no drift allowance, not the default
			return nil
		},
		"key_prefix": func(raw []byte) error {
			p, err := parseString("key_prefix", raw)
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
	return cfg, nil
}

// parseOptions parses options_json; "" stands for a NULL pointer (defaults).
func parseOptions(s string, isNull bool) (acquireOptions, error) {
	var o acquireOptions
	if isNull {
		return o, nil
	}
	err := parseObject("options", s, map[string]func([]byte) error{
		"wait_ms": func(raw []byte) error {
			d, err := parseMillis("wait_ms", raw, core.MaxWait)
			o.Wait = d
			return err
		},
		"auto_extend": func(raw []byte) error {
			switch string(raw) {
			case "true":
				o.AutoExtend = true
			case "false":
				o.AutoExtend = false
			default:
				return argErr("auto_extend", "must be true or false")
			}
			return nil
		},
	})
	if err != nil {
		return acquireOptions{}, err
	}
	return o, nil
}

// ttlFromMillis checks an int64 ttl in milliseconds before converting it, so
// that huge values cannot overflow time.Duration.
func ttlFromMillis(ms int64) (time.Duration, error) {
	if ms < core.MinTTL.Milliseconds() || ms > core.MaxTTL.Milliseconds() {
		return 0, argErr("ttl_ms", "must be between %d and %d, got %d", core.MinTTL.Milliseconds(), core.MaxTTL.Milliseconds(), ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
