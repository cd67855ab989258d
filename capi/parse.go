package main

import (
	"crypto/tls"
	"fmt"
	"strconv"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/hostabi"
)

// The configuration JSON of lock_client_new and lock_engine_new and the
// acquire options JSON are parsed by package hostabi, the one parser
// liblock.so and liblock.wasm share (strict: exact keys, no duplicates,
// documented types, integers without fraction or exponent, never null,
// nothing after the object).

// maxJSONLength bounds the JSON text a caller may pass (1 MiB).
const maxJSONLength = hostabi.MaxJSONLength

// acquireOptions are the parsed options JSON (hostabi's, shared with
// liblock.wasm).
type acquireOptions hostabi.AcquireOptions

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
	if o.Permits != 0 {
		opts = append(opts, core.Permits(o.Permits))
	}
	switch o.Mode {
	case core.ModeRead:
		opts = append(opts, core.Read())
	case core.ModeWrite:
		opts = append(opts, core.Write())
	}
	return opts
}

func argErr(arg, format string, a ...any) error {
	return &core.ArgumentError{Arg: arg, Reason: fmt.Sprintf(format, a...)}
}

// parseConfig parses lock_client_new's config_json (see liblock.h) and
// validates the result; the TLS files are read now (capi/tls.go).
func parseConfig(s string) (core.Config, error) {
	c, files, err := hostabi.ParseClientConfig(s)
	if err != nil {
		return core.Config{}, err
	}
	// No telemetry: nobody can install an OpenTelemetry SDK for the Go
	// inside liblock.so. The engine's reports go to the program instead,
	// once it sets a callback (lock_client_set_report, report.go); until
	// then the engine makes none.
	cfg := core.Config{Nodes: c.Nodes, NodeTimeout: c.NodeTimeout, DriftFactor: c.DriftFactor, KeyPrefix: c.KeyPrefix, Owner: c.Owner, WaitReplicas: c.WaitReplicas, NoTelemetry: true, Reporting: true, Logger: quietLogger}
	if err := cfg.Validate(); err != nil {
		return core.Config{}, err
	}
	if cfg.TLS, err = tlsConfig(files); err != nil {
		return core.Config{}, err
	}
	// A node object's TLS keys replace the client-level ones for it.
	for i := 0; i < len(cfg.Nodes); i++ {
		f, ok := c.NodeTLS[i]
		if !ok {
			continue
		}
		t, err := tlsConfigOf("nodes["+strconv.Itoa(i)+"].", f)
		if err != nil {
			return core.Config{}, err
		}
		if cfg.NodeTLS == nil {
			cfg.NodeTLS = make(map[int]*tls.Config)
		}
		cfg.NodeTLS[i] = t
	}
	return cfg, nil
}

// parseOptions parses options_json; isNull stands for a NULL pointer
// (defaults). Keys: wait_ms (integer ms, 0..MaxWait), auto_extend (bool),
// token (string, engine.MinToken..engine.MaxToken bytes), fence (bool; not
// with token), checked by hostabi when the options are parsed, so that the
// async form refuses them before it starts.
func parseOptions(s string, isNull bool) (acquireOptions, error) {
	o, err := hostabi.ParseOptions(s, isNull)
	return acquireOptions(o), err
}

// ttlFromMillis checks an int64 ttl in milliseconds before converting it, so
// that huge values cannot overflow time.Duration.
func ttlFromMillis(ms int64) (time.Duration, error) {
	d, err := hostabi.TTLFromMillis(ms)
	return d, err
}
