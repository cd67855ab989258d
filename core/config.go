package core

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Limits and defaults. Values outside the limits are rejected with
// ErrInvalidArgument before anything is sent to Redis.
const (
	DefaultNodeTimeout = 50 * time.Millisecond
	MaxNodeTimeout     = time.Minute
	DefaultDriftFactor = 0.01
	// MaxDriftFactor: a drift of a tenth of the ttl already means clocks
	// that cannot be trusted for leases at all.
	MaxDriftFactor = 0.1
	MinTTL         = time.Millisecond
	// MaxTTL is the longest lease: hold a lock longer with AutoExtend.
	MaxTTL            = 24 * time.Hour
	MaxWait           = 24 * time.Hour
	MaxResourceLength = 1024 // bytes
	MaxKeyPrefix      = 256  // bytes
	MaxNodes          = 64
)

// Config describes a Client.
type Config struct {
	// Nodes holds one URL per independent Redis master:
	// redis://[user:password@]host:port[/db], rediss://... for TLS, or
	// unix:///path/to/socket. At least one.
	Nodes []string
	// NodeTimeout bounds every single node request, for every operation.
	// Zero means DefaultNodeTimeout.
	NodeTimeout time.Duration
	// DriftFactor is the clock drift allowance: validity = ttl − elapsed −
	// (ttl × DriftFactor + 2 ms). Nil means DefaultDriftFactor.
	DriftFactor *float64
	// KeyPrefix is prepended to every resource to form the Redis key.
	KeyPrefix string
}

func (cfg Config) nodeTimeout() time.Duration {
	if cfg.NodeTimeout == 0 {
		return DefaultNodeTimeout
	}
	return cfg.NodeTimeout
}

func (cfg Config) driftFactor() float64 {
	if cfg.DriftFactor == nil {
		return DefaultDriftFactor
	}
	return *cfg.DriftFactor
}

// Validate checks everything but the node list.
func (cfg Config) validateOptions() error {
	if cfg.NodeTimeout < 0 || cfg.NodeTimeout > MaxNodeTimeout {
		return argError("node_timeout", "must be > 0 and at most %v, got %v", MaxNodeTimeout, cfg.NodeTimeout)
	}
	if d := cfg.driftFactor(); !(d >= 0 && d <= MaxDriftFactor) { // also rejects NaN
		return argError("drift_factor", "must be between 0 and %v, got %v", MaxDriftFactor, d)
	}
	if len(cfg.KeyPrefix) > MaxKeyPrefix {
		return argError("key_prefix", "longer than %d bytes", MaxKeyPrefix)
	}
	if !utf8.ValidString(cfg.KeyPrefix) {
		return argError("key_prefix", "not valid UTF-8")
	}
	return nil
}

// Validate checks the configuration without connecting to anything.
func (cfg Config) Validate() error {
	if len(cfg.Nodes) == 0 {
		return argError("nodes", "at least one node URL is required")
	}
	if len(cfg.Nodes) > MaxNodes {
		return argError("nodes", "at most %d nodes, got %d", MaxNodes, len(cfg.Nodes))
	}
	for i, raw := range cfg.Nodes {
		if err := checkNodeURL(raw); err != nil {
			return argError(fmt.Sprintf("nodes[%d]", i), "%s", err)
		}
	}
	return cfg.validateOptions()
}

// checkNodeURL is the syntax check shared by every transport. Its messages
// never repeat the URL, which may hold a password.
func checkNodeURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("empty URL")
	}
	u, err := parseNodeURL(raw)
	if err != nil {
		return fmt.Errorf("malformed URL")
	}
	switch u.scheme {
	case "redis", "rediss":
		if u.hostname == "" {
			return fmt.Errorf("%s URL without a host", u.scheme)
		}
	case "unix":
		if u.path == "" {
			return fmt.Errorf("unix URL without a socket path")
		}
	default:
		return fmt.Errorf("scheme %q is not redis, rediss or unix", u.scheme)
	}
	return nil
}

func checkResource(resource string) error {
	switch {
	case resource == "":
		return argError("resource", "must not be empty")
	case len(resource) > MaxResourceLength:
		return argError("resource", "longer than %d bytes", MaxResourceLength)
	case !utf8.ValidString(resource):
		return argError("resource", "not valid UTF-8")
	}
	return nil
}

func checkTTL(ttl time.Duration) error {
	if ttl < MinTTL || ttl > MaxTTL {
		return argError("ttl", "must be between %v and %v, got %v", MinTTL, MaxTTL, ttl)
	}
	return nil
}
