package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/liblock/liblock/core"
)

// durationFlag is a flag.Value for a duration that must carry a unit: a
// bare number (is 30 seconds or milliseconds?) is refused.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}

// parseDuration is time.ParseDuration, refusing bare numbers and negatives.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil // zero needs no unit
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("%q has no unit: add one, e.g. %ss or %sms", s, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write e.g. 10s, 500ms, 1m30s)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// common holds the flags every command that talks to nodes has.
type common struct {
	nodes       string
	nodeTimeout time.Duration
	keyPrefix   string
	owner       string
	json        bool
	// waitReplicas is --wait-replicas (Config.WaitReplicas); nil: the
	// library's default (1 on Sentinel nodes, off on the others).
	waitReplicas *int
	// tls: --tls-* (tlsflags.go); tlsBase what config loaded from them,
	// for doctor's own connections.
	tls     tlsOpts
	tlsBase *tls.Config
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed by the caller, usage on --help
	fs.Usage = func() {}
	return fs
}

func (c *common) register(fs *flag.FlagSet, withJSON bool) {
	fs.StringVar(&c.nodes, "nodes", "", "comma-separated node URLs (default $LIBLOCK_NODES)")
	c.nodeTimeout = 50 * time.Millisecond
	fs.Var(durationFlag{&c.nodeTimeout}, "node-timeout", "bound of every node request (a `duration` with a unit)")
	fs.StringVar(&c.keyPrefix, "key-prefix", "", "prepended to NAME to form the Redis key")
	fs.StringVar(&c.owner, "owner", "", "owner label stored with the lock (shown by inspect; no '/')")
	fs.Func("wait-replicas", "replicas that must acknowledge each grant (WAIT) on Sentinel nodes; 0: off (default 1 on Sentinel nodes, off on the others)", func(s string) error {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a whole number of replicas", s)
		}
		c.waitReplicas = &n
		return nil
	})
	c.tls.register(fs)
	if withJSON {
		fs.BoolVar(&c.json, "json", false, "print JSON lines")
	}
}

// nodeList returns the node URLs from --nodes or LIBLOCK_NODES.
func (c *common) nodeList() ([]string, error) {
	raw, from := c.nodes, "--nodes"
	if raw == "" {
		raw, from = os.Getenv("LIBLOCK_NODES"), "LIBLOCK_NODES"
		if raw == "" {
			return nil, usagef("no nodes: pass --nodes redis://host:port,... or set LIBLOCK_NODES")
		}
	}
	var out []string
	for _, n := range strings.Split(raw, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, usagef("%s lists no node URL", from)
	}
	return out, nil
}

func (c *common) config() (core.Config, error) {
	nodes, err := c.nodeList()
	if err != nil {
		return core.Config{}, err
	}
	if c.tlsBase, err = c.tls.load(); err != nil {
		return core.Config{}, err
	}
	cfg := core.Config{Nodes: nodes, NodeTimeout: c.nodeTimeout, KeyPrefix: c.keyPrefix, Owner: c.owner, WaitReplicas: c.waitReplicas, TLS: c.tlsBase}
	if err := cfg.Validate(); err != nil {
		return core.Config{}, argUsage(err)
	}
	return cfg, nil
}

// argUsage turns the library's argument errors into usage errors naming
// the flag.
func argUsage(err error) error {
	var ae *core.ArgumentError
	if !errors.As(err, &ae) {
		return err
	}
	flagName := map[string]string{
		"node_timeout": "--node-timeout", "nodeTimeout": "--node-timeout", "NodeTimeout": "--node-timeout",
		"key_prefix": "--key-prefix", "keyPrefix": "--key-prefix", "KeyPrefix": "--key-prefix",
		"owner": "--owner", "Owner": "--owner", "ttl": "--ttl", "wait": "--wait", "token": "--token",
		"resource": "NAME", "nodes": "--nodes", "permits": "--permits", "mode": "--read/--write", "wait_replicas": "--wait-replicas",
	}[ae.Arg]
	if flagName == "" && strings.HasPrefix(ae.Arg, "nodes") {
		flagName = "--nodes"
	}
	if flagName == "" {
		return usagef("%s", errText(err))
	}
	return usagef("%s: %s", flagName, errText(err))
}

// parseInterleaved parses flags wherever they stand among the positional
// arguments (flag stops at the first non-flag); it returns the positional
// ones. "--" is not special here: callers split it off first.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			msg := strings.Replace(err.Error(), "for flag -", "for flag --", 1)
			msg = strings.Replace(msg, "for -", "for --", 1)
			msg = strings.Replace(msg, "flag provided but not defined: -", "unknown flag --", 1)
			msg = strings.Replace(msg, "flag needs an argument: -", "flag needs an argument: --", 1)
			return nil, usagef("%s", msg)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// exitFor maps a library error to an exit code.
func exitFor(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.Is(err, core.ErrInvalidArgument):
		return exitUsage
	case errors.Is(err, core.ErrNotAcquired):
		return exitNotAcquired
	case errors.Is(err, core.ErrUnavailable):
		return exitUnavailable
	case errors.Is(err, core.ErrLost):
		return exitLost
	}
	return exitInternal
}

// fail prints err (never a password: the library redacts node URLs) and
// returns its exit code.
// client makes the Client of a command that talks to the nodes (run, elect,
// inspect, release). On failure it says why on stderr and returns nil and
// the command's exit code.
func (c *common) client(cmd string, stderr io.Writer) (*core.Client, int) {
	cfg, err := c.config()
	if err != nil {
		return nil, fail(stderr, cmd, err)
	}
	client, err := core.New(cfg)
	if err != nil {
		return nil, fail(stderr, cmd, argUsage(err))
	}
	return client, exitOK
}

func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "liblock %s: %s\n", cmd, errText(err))
	if h := hint(err); h != "" {
		fmt.Fprintf(stderr, "fix: %s\n", h)
	}
	if errors.As(err, new(*usageError)) {
		fmt.Fprintf(stderr, "see liblock %s --help\n", cmd)
	}
	return exitFor(err)
}
