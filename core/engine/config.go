package engine

import (
	"strconv"
	"strings"
	"unicode/utf8"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// The limits and defaults (MinTTL, MaxTTL, MaxWait, MaxResourceLength,
// MaxKeyPrefix, MaxOwner, MinToken, MaxToken, MaxNodes, MaxNodeTimeout,
// DefaultNodeTimeout, MaxDriftFactor, DefaultDriftFactor) are in
// limits_gen.go, generated from core/hostabi/spec/protocol.json. Values
// outside them are rejected with ErrInvalidArgument before anything is sent
// to Redis.
const (
	// ClockPrecision is Redis's expiry precision, added to the drift.
	ClockPrecision = 2 * time.Millisecond
)

// Retry delays while waiting: randomized (jitter breaks split votes between
// contenders) and growing, so that a long wait does not hammer the nodes.
const (
	minRetryDelay = 2 * time.Millisecond
	maxRetryDelay = 50 * time.Millisecond
)

// Turns between clients (see handOff): while other clients wait for a key,
// this engine hands it from one local waiter to the next at most
// maxLocalRun times or for maxLocalRunTime, then lets the others' waiters
// go first, and retries itself after yieldGrace if none of them took it.
const (
	maxLocalRun     = 8
	maxLocalRunTime = 10 * time.Millisecond
	yieldGrace      = 2 * time.Millisecond
)

// Node is one Redis master, resolved: how to reach it and what the
// connection handshake sends. ParseNode makes one from a node URL.
type Node struct {
	Network    string // "tcp" or "unix"
	Addr       string // host:port, or the socket path
	TLS        bool
	ServerName string // TLS server name
	SkipVerify bool   // TLS without certificate verification
	Username   string
	Password   string
	DB         int
	ClientName string
	// MasterName, when set, makes the node the primary of a Sentinel
	// deployment (sentinel.go): Addr is then its first sentinel, and the
	// engine asks Sentinels (in turn, with SentinelUsername and
	// SentinelPassword) where the primary is before each new connection.
	MasterName                         string
	Sentinels                          []string
	SentinelUsername, SentinelPassword string
	// Cluster makes the node a whole Redis Cluster (cluster.go), found
	// through Seeds (Addr is the first): one vote, its keys routed to the
	// shard primaries by slot.
	Cluster bool
	Seeds   []string
}

// Config describes an Engine.
type Config struct {
	Nodes []Node
	// NodeTimeout bounds every single node exchange, for every operation.
	// Zero means DefaultNodeTimeout.
	NodeTimeout time.Duration
	// DriftFactor is the clock drift allowance: a lock is held until
	// start + ttl − (ttl × DriftFactor + 2 ms). Nil means DefaultDriftFactor.
	DriftFactor *float64
	// KeyPrefix is prepended to every resource to form the Redis key.
	KeyPrefix string
	// Owner is an optional label carried in the value of every lock this
	// engine takes ("owner/uuid"), which Inspect reports; the token keeps
	// its 122 random bits. At most MaxOwner bytes of UTF-8, without '/'.
	Owner string
	// WaitReplicas: after each grant and each extension, WAIT for that
	// many replicas of the node to acknowledge it before the node's answer
	// counts (wait.go). Nil is the default: 1 on Sentinel and Cluster nodes, off on
	// the others; 0 turns it off.
	WaitReplicas *int
	// Report makes the engine emit ActReport actions: what it did, for a
	// host's metrics, traces and logs (report.go). Off, it emits none.
	Report bool
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

// ValidateOptions checks everything but the node list.
func (cfg Config) ValidateOptions() error {
	if cfg.NodeTimeout < 0 || cfg.NodeTimeout > MaxNodeTimeout {
		return outOfRange("node_timeout", "must be > 0 and at most "+MaxNodeTimeout.String()+", got "+cfg.NodeTimeout.String(),
			cfg.NodeTimeout < 0, cfg.NodeTimeout.Milliseconds(), 1, MaxNodeTimeout.Milliseconds(), "ms")
	}
	if d := cfg.driftFactor(); !(d >= 0 && d <= MaxDriftFactor) { // also rejects NaN
		return invalidArg("drift_factor", "must be between 0 and "+strconv.FormatFloat(MaxDriftFactor, 'g', -1, 64)+", got "+strconv.FormatFloat(d, 'g', -1, 64))
	}
	if len(cfg.KeyPrefix) > MaxKeyPrefix {
		return outOfRange("key_prefix", "longer than "+strconv.Itoa(MaxKeyPrefix)+" bytes", false, int64(len(cfg.KeyPrefix)), 0, MaxKeyPrefix, "bytes")
	}
	if !utf8.ValidString(cfg.KeyPrefix) {
		return invalidArg("key_prefix", "not valid UTF-8")
	}
	switch {
	case len(cfg.Owner) > MaxOwner:
		return outOfRange("owner", "longer than "+strconv.Itoa(MaxOwner)+" bytes", false, int64(len(cfg.Owner)), 0, MaxOwner, "bytes")
	case !utf8.ValidString(cfg.Owner):
		return invalidArg("owner", "not valid UTF-8")
	case strings.Contains(cfg.Owner, "/"):
		return invalidArg("owner", "must not contain '/'")
	}
	return cfg.validateWait()
}

// Validate checks the whole configuration.
func (cfg Config) Validate() error {
	if len(cfg.Nodes) == 0 {
		return invalidArg("nodes", "at least one node URL is required")
	}
	if len(cfg.Nodes) > MaxNodes {
		return outOfRange("nodes", "at most "+strconv.Itoa(MaxNodes)+" nodes, got "+strconv.Itoa(len(cfg.Nodes)), false, int64(len(cfg.Nodes)), 1, MaxNodes, "count")
	}
	seen := make(map[string]int, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		if n.Addr == "" || (n.Network != "tcp" && n.Network != "unix") {
			return invalidArg(indexed("nodes", i), "no address")
		}
		// One server listed twice would grant twice and fake a quorum
		// (its failure would also count twice): whatever the db, since
		// one server's databases fail together.
		id := n.Network + " " + n.Addr
		if n.MasterName != "" {
			id = sentinelID(n)
		}
		if n.Cluster {
			id = clusterID(n)
		}
		if n.Network == "tcp" {
			id = strings.ToLower(id)
		}
		if j, dup := seen[id]; dup {
			return invalidArg(indexed("nodes", i), "the same server as "+indexed("nodes", j)+" ("+n.Addr+
				"): one server listed twice would grant a lock twice and fake a quorum; list each server once")
		}
		seen[id] = i
	}
	return cfg.ValidateOptions()
}

// ParseNodes reads node URLs (redis://, rediss://, unix://) exactly as
// go-redis's ParseURL does; an error names the URL's place ("nodes[1]") and
// never repeats its password.
func ParseNodes(urls []string) ([]Node, error) {
	if len(urls) == 0 {
		return nil, invalidArg("nodes", "at least one node URL is required")
	}
	if len(urls) > MaxNodes {
		return nil, outOfRange("nodes", "at most "+strconv.Itoa(MaxNodes)+" nodes, got "+strconv.Itoa(len(urls)), false, int64(len(urls)), 1, MaxNodes, "count")
	}
	nodes := make([]Node, len(urls))
	for i, raw := range urls {
		if raw == "" {
			return nil, invalidArg(indexed("nodes", i), "empty URL")
		}
		n, err := parseNodeURL(raw)
		if err != nil {
			return nil, invalidArg(indexed("nodes", i), err.Error())
		}
		nodes[i] = n
	}
	return nodes, nil
}

// CheckResource validates a resource name.
func CheckResource(resource string) error {
	switch {
	case resource == "":
		return outOfRange("resource", "must not be empty", true, 0, 1, MaxResourceLength, "bytes")
	case len(resource) > MaxResourceLength:
		return outOfRange("resource", "longer than "+strconv.Itoa(MaxResourceLength)+" bytes", false, int64(len(resource)), 1, MaxResourceLength, "bytes")
	case !utf8.ValidString(resource):
		return invalidArg("resource", "not valid UTF-8")
	}
	return nil
}

// CheckTTL validates a lock ttl.
func CheckTTL(ttl time.Duration) error {
	if ttl < MinTTL || ttl > MaxTTL {
		return outOfRange("ttl", "must be between "+MinTTL.String()+" and "+MaxTTL.String()+", got "+ttl.String(),
			ttl < MinTTL, ttl.Milliseconds(), MinTTL.Milliseconds(), MaxTTL.Milliseconds(), "ms")
	}
	return nil
}

// CheckWait validates a wait budget.
func CheckWait(wait time.Duration) error {
	if wait < 0 || wait > MaxWait {
		return outOfRange("wait", "must be between 0 and "+MaxWait.String()+", got "+wait.String(),
			wait < 0, wait.Milliseconds(), 0, MaxWait.Milliseconds(), "ms")
	}
	return nil
}
