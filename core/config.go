package core

import (
	"log/slog"

	"crypto/tls"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"strconv"
	"time"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/engine/nodeurl"
)

// Limits and defaults, the engine's. Values outside the limits are rejected
// with ErrInvalidArgument before anything is sent to Redis.
const (
	DefaultNodeTimeout = engine.DefaultNodeTimeout
	MaxNodeTimeout     = engine.MaxNodeTimeout
	DefaultDriftFactor = engine.DefaultDriftFactor
	// MaxDriftFactor: a drift of a tenth of the ttl already means clocks
	// that cannot be trusted for leases at all.
	MaxDriftFactor = engine.MaxDriftFactor
	MinTTL         = engine.MinTTL
	// MaxTTL is the longest lease: hold a lock longer with AutoExtend.
	MaxTTL            = engine.MaxTTL
	MaxWait           = engine.MaxWait
	MaxResourceLength = engine.MaxResourceLength // bytes
	MaxKeyPrefix      = engine.MaxKeyPrefix      // bytes
	MaxNodes          = engine.MaxNodes
)

// Config describes a Client.
type Config struct {
	// Nodes holds one URL per independent Redis master:
	// redis://[user:password@]host:port[/db], rediss://... for TLS, or
	// unix:///path/to/socket, read exactly as go-redis's ParseURL reads
	// them; or a Sentinel-managed primary,
	// redis://[s_user:s_password@]sentinel:port[/db]?master_name=NAME&addr=sentinel2:port...[&password=P],
	// read as go-redis's ParseFailoverURL reads it (README "Sentinel
	// nodes"). At least one.
	Nodes []string
	// NodeTimeout bounds every single node request, for every operation.
	// Zero means DefaultNodeTimeout.
	NodeTimeout time.Duration
	// DriftFactor is the clock drift allowance: a lock is held until
	// start + ttl − (ttl × DriftFactor + 2 ms). Nil means DefaultDriftFactor.
	DriftFactor *float64
	// KeyPrefix is prepended to every resource to form the Redis key.
	KeyPrefix string
	// Owner is an optional label carried in the value of every lock this
	// Client takes (the value is then "owner/uuid"), which Inspect reports
	// to anyone. At most 128 bytes of UTF-8, without '/'.
	Owner string
	// TLS is the base of every rediss:// node's TLS settings: a private CA
	// (RootCAs), a client certificate for mutual TLS (Certificates), a
	// ServerName to verify instead of the URL's host. Each connection uses
	// a clone; ServerName is the URL's host unless TLS sets one, and a
	// URL's skip_verify=true still turns verification off for its node.
	// Nil means the system's roots and no client certificate. It does not
	// apply to redis:// and unix:// nodes, nor to NewFromClients (each
	// go-redis client's TLSConfig does).
	TLS *tls.Config
	// NodeTLS replaces TLS for the rediss:// nodes it names, by index in
	// Nodes (a node not in it gets TLS): for nodes whose settings differ,
	// e.g. certificates from different private CAs. The same rules as TLS
	// apply to each entry (a clone per connection, the URL's host as the
	// default ServerName, skip_verify=true). An index outside Nodes is an
	// error. It was added for the C ABI's per-node TLS keys; from Go,
	// NewFromClients does the same with each go-redis client's TLSConfig.
	NodeTLS map[int]*tls.Config
	// WaitReplicas follows each grant and each extension with WAIT: a
	// node's grant counts only once that many of its replicas acknowledged
	// it within the node timeout, and is deleted otherwise (README "WAIT").
	// Nil is the default: 1 on Sentinel and Redis Cluster nodes, off on the others; 0 turns
	// it off; at most 100.
	WaitReplicas *int

	// MeterProvider makes the Client's instruments (README "Metrics,
	// traces and logs"). Nil means otel's global one, whose default is a
	// no-op until the application installs an SDK.
	MeterProvider metric.MeterProvider
	// TracerProvider makes the spans of Acquire, Extend and Release, each
	// a child of the caller's ctx. Nil means otel's global one.
	TracerProvider trace.TracerProvider
	// Logger gets the Client's log lines: operations at Debug, losses and
	// failed auto-extensions at Warn. Nil: slog.Default() gets the losses
	// (a lost lock is never silent), and nothing else. Never a token or a
	// password.
	Logger *slog.Logger
	// ResourceLabel, when set, maps a resource to the value of the
	// liblock.resource attribute of the lock metrics and spans. Off by
	// default: resource names are often unbounded (one per user, per
	// job), and each value is a time series. Return a few values (a
	// prefix, a class of resource).
	ResourceLabel func(resource string) string
	// NoTelemetry turns reporting off entirely: the engine makes no
	// reports and no instrument is made.
	NoTelemetry bool
	// Reporting makes an engine that can report to Client.SetReports's
	// function (reports.go), whatever NoTelemetry says; without telemetry
	// it reports nothing until a function is set.
	Reporting bool
}

// engineConfig is cfg for the engine, with nodes already resolved.
func (cfg Config) engineConfig(nodes []engine.Node) engine.Config {
	return engine.Config{Nodes: nodes, NodeTimeout: cfg.NodeTimeout, DriftFactor: cfg.DriftFactor, KeyPrefix: cfg.KeyPrefix, Owner: cfg.Owner, WaitReplicas: cfg.WaitReplicas, Report: (defaultTelemetry && !cfg.NoTelemetry && telemetryBuilt) || cfg.Reporting}
}

func (cfg Config) nodeTimeout() time.Duration {
	if cfg.NodeTimeout == 0 {
		return DefaultNodeTimeout
	}
	return cfg.NodeTimeout
}

// Validate checks the configuration without connecting to anything.
func (cfg Config) Validate() error {
	nodes, err := engine.ParseNodes(cfg.Nodes)
	if err != nil {
		return err
	}
	if err := cfg.checkNodeTLS(); err != nil {
		return err
	}
	return cfg.engineConfig(nodes).Validate()
}

// RedactURL returns the URL with any password replaced by "xxxxx", for
// messages and logs ("(malformed URL)" for one that does not parse).
func RedactURL(raw string) string { return nodeurl.Redact(raw) }

// checkNodeTLS refuses a NodeTLS index that is not a node's.
func (cfg Config) checkNodeTLS() error {
	for i := range cfg.NodeTLS {
		if i < 0 || i >= len(cfg.Nodes) {
			return invalidArg("nodetls", "index "+strconv.Itoa(i)+" is not a node (there are "+strconv.Itoa(len(cfg.Nodes))+")")
		}
	}
	return nil
}
