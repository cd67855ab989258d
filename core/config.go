package core

import (
	"errors"
	"strconv"
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
		return invalidArg("node_timeout", "must be > 0 and at most "+MaxNodeTimeout.String()+", got "+cfg.NodeTimeout.String())
	}
	if d := cfg.driftFactor(); !(d >= 0 && d <= MaxDriftFactor) { // also rejects NaN
		// FormatFloat(x, 'g', -1, 64) prints what fmt's %v does (NaN, +Inf too).
		return invalidArg("drift_factor", "must be between 0 and "+strconv.FormatFloat(MaxDriftFactor, 'g', -1, 64)+", got "+strconv.FormatFloat(d, 'g', -1, 64))
	}
	if len(cfg.KeyPrefix) > MaxKeyPrefix {
		return invalidArg("key_prefix", "longer than "+strconv.Itoa(MaxKeyPrefix)+" bytes")
	}
	if !utf8.ValidString(cfg.KeyPrefix) {
		return invalidArg("key_prefix", "not valid UTF-8")
	}
	return nil
}

// Validate checks the configuration without connecting to anything.
func (cfg Config) Validate() error {
	if len(cfg.Nodes) == 0 {
		return invalidArg("nodes", "at least one node URL is required")
	}
	if len(cfg.Nodes) > MaxNodes {
		return invalidArg("nodes", "at most "+strconv.Itoa(MaxNodes)+" nodes, got "+strconv.Itoa(len(cfg.Nodes)))
	}
	for i, raw := range cfg.Nodes {
		if err := checkNodeURL(raw); err != nil {
			return invalidArg(indexed("nodes", i), err.Error())
		}
	}
	return cfg.validateOptions()
}

// checkNodeURL is the syntax check shared by every transport. Its messages
// never repeat the URL, which may hold a password.
func checkNodeURL(raw string) error {
	if raw == "" {
		return errors.New("empty URL")
	}
	u, err := parseNodeURL(raw)
	if err != nil {
		return errors.New("malformed URL")
	}
	switch u.scheme {
	case "redis", "rediss":
		if u.hostname == "" {
			return errors.New(u.scheme + " URL without a host")
		}
	case "unix":
		if u.path == "" {
			return errors.New("unix URL without a socket path")
		}
	default:
		return errors.New("scheme " + strconv.Quote(u.scheme) + " is not redis, rediss or unix")
	}
	return nil
}

func checkResource(resource string) error {
	switch {
	case resource == "":
		return invalidArg("resource", "must not be empty")
	case len(resource) > MaxResourceLength:
		return invalidArg("resource", "longer than "+strconv.Itoa(MaxResourceLength)+" bytes")
	case !utf8.ValidString(resource):
		return invalidArg("resource", "not valid UTF-8")
	}
	return nil
}

func checkTTL(ttl time.Duration) error {
	if ttl < MinTTL || ttl > MaxTTL {
		return invalidArg("ttl", "must be between "+MinTTL.String()+" and "+MaxTTL.String()+", got "+ttl.String())
	}
	return nil
}
