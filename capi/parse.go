package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/engine/hostabi"
)

// The configuration JSON of lock_client_new and lock_engine_new is parsed by
// package hostabi, the one parser liblock.so and liblock.wasm share (strict:
// exact keys, no duplicates, documented types, integers without fraction or
// exponent, never null, nothing after the object). The acquire options JSON
// is parsed here, by the same rules (parseOptions): hostabi.ParseOptions
// does not know the keys token and fence yet.

// maxJSONLength bounds the JSON text a caller may pass (1 MiB).
const maxJSONLength = hostabi.MaxJSONLength

// acquireOptions is the parsed options_json of an acquire.
type acquireOptions struct {
	Wait       time.Duration
	AutoExtend bool
	Token      string // "": a random token
	Fence      bool
}

func coreOptions(o acquireOptions) []core.AcquireOption {
	var opts []core.AcquireOption
	if o.Wait > 0 {
		opts = append(opts, core.Wait(o.Wait))
	}
	if o.AutoExtend {
		opts = append(opts, core.AutoExtend())
	}
	if o.Token != "" {
		opts = append(opts, core.WithToken(o.Token))
	}
	if o.Fence {
		opts = append(opts, core.Fence())
	}
	return opts
}

func argErr(arg, format string, a ...any) error {
	return &core.ArgumentError{Arg: arg, Reason: fmt.Sprintf(format, a...)}
}

// parseConfig parses config_json (see liblock.h) and validates the result.
func parseConfig(s string) (core.Config, error) {
	c, err := hostabi.ParseConfig(s)
	if err != nil {
		return core.Config{}, err
	}
	cfg := core.Config{Nodes: c.Nodes, NodeTimeout: c.NodeTimeout, DriftFactor: c.DriftFactor, KeyPrefix: c.KeyPrefix, Owner: c.Owner}
	if err := cfg.Validate(); err != nil {
		return core.Config{}, err
	}
	return cfg, nil
}

// parseOptions parses options_json; isNull stands for a NULL pointer
// (defaults). Keys: wait_ms (integer ms, 0..MaxWait), auto_extend (bool),
// token (string, engine.MinToken..engine.MaxToken bytes), fence (bool; not
// with token). The rules and messages are hostabi's (see above); the token
// and fence checks are the engine's, made here so that the async form
// refuses them before it starts.
func parseOptions(s string, isNull bool) (acquireOptions, error) {
	var none, o acquireOptions
	if isNull {
		return o, nil
	}
	if len(s) > maxJSONLength {
		return none, argErr("options", "longer than %d bytes", maxJSONLength)
	}
	if !utf8.ValidString(s) {
		return none, argErr("options", "not valid UTF-8")
	}
	malformed := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return argErr("options", "malformed JSON: %s at offset %d", se.Error(), se.Offset)
		}
		return argErr("options", "malformed JSON: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return none, malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return none, argErr("options", "must be a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return none, malformed(err)
		}
		key, _ := tok.(string) // the decoder allows only strings as keys
		switch key {
		case "wait_ms", "auto_extend", "token", "fence":
		default:
			return none, argErr("options", "unknown key %s", strconv.Quote(key))
		}
		if seen[key] {
			return none, argErr("options", "duplicate key %s", strconv.Quote(key))
		}
		seen[key] = true
		if tok, err = dec.Token(); err != nil {
			return none, malformed(err)
		}
		if tok == nil {
			return none, argErr(key, "must not be null")
		}
		var ok bool
		switch key {
		case "wait_ms":
			n, isNum := tok.(json.Number)
			if !isNum || !isInteger(string(n)) {
				return none, argErr(key, "must be an integer number of milliseconds")
			}
			if n[0] == '-' {
				return none, argErr(key, "must not be negative")
			}
			ms, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || ms > core.MaxWait.Milliseconds() {
				return none, argErr(key, "must be at most %d ms", core.MaxWait.Milliseconds())
			}
			o.Wait, ok = time.Duration(ms)*time.Millisecond, true
		case "auto_extend":
			o.AutoExtend, ok = tok.(bool)
			if !ok {
				return none, argErr(key, "must be true or false")
			}
		case "fence":
			o.Fence, ok = tok.(bool)
			if !ok {
				return none, argErr(key, "must be true or false")
			}
		case "token":
			o.Token, ok = tok.(string)
			if !ok {
				return none, argErr(key, "must be a string")
			}
			if n := len(o.Token); n < engine.MinToken || n > engine.MaxToken {
				return none, argErr(key, "must be %d to %d bytes, got %d", engine.MinToken, engine.MaxToken, n)
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return none, malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return none, argErr("options", "malformed JSON: data after the object")
	}
	if o.Fence && o.Token != "" {
		return none, argErr("fence", "not with a caller's token")
	}
	return o, nil
}

// isInteger reports a JSON number written without fraction or exponent.
func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == "" && (s == "0" || s[0] != '0')
}

// ttlFromMillis checks an int64 ttl in milliseconds before converting it, so
// that huge values cannot overflow time.Duration.
func ttlFromMillis(ms int64) (time.Duration, error) {
	d, err := hostabi.TTLFromMillis(ms)
	return d, err
}
