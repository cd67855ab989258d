package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/liblock/liblock/core/testkit/redistest"
)

// sentinelURL is the Sentinel deployment's node URL (-sentinel), or "";
// clusterURL the Redis Cluster's (-cluster), clusterTLSURL its rediss://
// URL (-cluster -tls).
var sentinelURL, clusterURL, clusterTLSURL string

type nodeInfo struct {
	Index int    `json:"index"`
	Port  int    `json:"port"`
	PID   int    `json:"pid"`
	URL   string `json:"url"`
}

func main() {
	n := flag.Int("n", 3, "number of nodes")
	dir := flag.String("dir", "", "directory for the nodes' data (default: a temporary one)")
	sentinel := flag.Bool("sentinel", false, "start a Sentinel deployment: a primary, n-1 replicas, 3 sentinels")
	clusterMode := flag.Bool("cluster", false, "start a Redis Cluster: n primaries, -replicas replicas each")
	replicas := flag.Int("replicas", 1, "with -cluster: replicas per primary")
	tlsDir := flag.String("tls", "", "with -cluster: a directory of mkcerts.sh's files; the nodes listen with TLS too")
	basePort := flag.Int("port", 0, "node i listens on this port + i (default: free ports)")
	hold := flag.Bool("hold", false, "keep the nodes until SIGINT or SIGTERM (no commands on standard input), then exit 0")
	flag.Parse()

	if *basePort != 0 {
		if *sentinel || *clusterMode {
			fatal(errors.New("-port is for plain nodes, not -sentinel or -cluster"))
		}
		if err := checkPorts(*basePort, *n); err != nil {
			fatal(err)
		}
	}
	if *hold && len(flag.Args()) > 0 {
		fatal(errors.New("-hold takes no command"))
	}

	// A signal to us must still stop the nodes: caught from before they
	// start (one that comes while they start stops them once started).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)

	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			fatal(err)
		}
	}
	var cluster *redistest.Cluster
	if *clusterMode {
		d := *dir
		if d == "" {
			var err error
			if d, err = os.MkdirTemp("", "redisnodes-cluster-"); err != nil {
				fatal(err)
			}
			defer os.RemoveAll(d)
		}
		opts := redistest.RedisClusterOptions{Primaries: *n, ReplicasEach: *replicas}
		if *tlsDir != "" {
			p := func(name string) string { return filepath.Join(*tlsDir, name) }
			opts.TLS = &redistest.ClusterTLS{Cert: p("server.pem"), Key: p("server.key"),
				ClientCert: p("client.pem"), ClientKey: p("client.key"), CA: p("ca.pem")}
		}
		rc, err := redistest.StartRedisClusterOpts(d, opts)
		if err != nil {
			fatal(err)
		}
		defer rc.Close()
		clusterURL = rc.URL()
		if *tlsDir != "" {
			clusterTLSURL = rc.TLSURL()
		}
		cluster = &redistest.Cluster{Nodes: rc.Nodes}
	} else if *tlsDir != "" {
		fatal(errors.New("-tls is for -cluster only"))
	} else if *sentinel {
		d := *dir
		if d == "" {
			var err error
			if d, err = os.MkdirTemp("", "redisnodes-sentinel-"); err != nil {
				fatal(err)
			}
			defer os.RemoveAll(d)
		}
		s, err := redistest.StartSentinelIn(d, *n-1, 3)
		if err != nil {
			fatal(err)
		}
		defer s.Close()
		sentinelURL = s.URL()
		// The commands act on the data nodes; closing them leaves the
		// sentinels to s.Close (and to Pdeathsig on a signal).
		cluster = &redistest.Cluster{Nodes: s.Data}
	} else {
		var err error
		if cluster, err = redistest.StartClusterWith(*n, *dir, redistest.Options{BasePort: *basePort}); err != nil {
			fatal(err)
		}
	}
	defer cluster.Close()

	if *hold {
		fmt.Printf("%d Redis nodes: LIBLOCK_NODES=%s\nCtrl-C stops them.\n", len(cluster.Nodes), strings.Join(cluster.URLs(), ","))
		<-sigs
		cluster.Close()
		fmt.Println("redisnodes: the nodes are stopped.")
		return
	}
	go func() {
		<-sigs
		cluster.Close()
		os.Exit(130)
	}()

	if args := flag.Args(); len(args) > 0 {
		code := runCommand(cluster, args)
		cluster.Close() // os.Exit skips deferred calls
		os.Exit(code)
	}
	serve(cluster)
}

func runCommand(c *redistest.Cluster, args []string) int {
	pids := make([]string, len(c.Nodes))
	for i, node := range c.Nodes {
		pids[i] = strconv.Itoa(node.PID())
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(),
		"LIBLOCK_NODES="+strings.Join(c.URLs(), ","),
		"LIBLOCK_NODE_PIDS="+strings.Join(pids, ","),
		"LIBLOCK_SENTINEL_URL="+sentinelURL,
		"LIBLOCK_CLUSTER_URL="+clusterURL,
		"LIBLOCK_CLUSTER_TLS_URL="+clusterTLSURL)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "redisnodes:", err)
		return 1
	}
}

func serve(c *redistest.Cluster) {
	out := json.NewEncoder(os.Stdout)
	first := map[string]any{"nodes": infos(c)}
	if sentinelURL != "" {
		first["sentinel_url"] = sentinelURL
	}
	if clusterURL != "" {
		first["cluster_url"] = clusterURL
	}
	if clusterTLSURL != "" {
		first["cluster_tls_url"] = clusterTLSURL
	}
	_ = out.Encode(first)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fields := strings.Fields(in.Text())
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "quit" {
			_ = out.Encode(map[string]any{"ok": true})
			return
		}
		reply, err := handle(c, fields)
		if err != nil {
			reply = map[string]any{"ok": false, "error": err.Error()}
		} else {
			reply["ok"] = true
		}
		_ = out.Encode(reply)
	}
}

func handle(c *redistest.Cluster, fields []string) (map[string]any, error) {
	switch fields[0] {
	case "nodes":
		return map[string]any{"nodes": infos(c)}, nil
	case "flush":
		return map[string]any{}, c.FlushAll()
	case "keys":
		all := make([][]string, len(c.Nodes))
		for i, node := range c.Nodes {
			all[i] = []string{}
			if node.PID() == 0 {
				continue
			}
			keys, err := node.Keys()
			if err != nil {
				return nil, err
			}
			if keys != nil {
				all[i] = keys
			}
		}
		return map[string]any{"keys": all}, nil
	}
	if len(fields) != 2 {
		return nil, fmt.Errorf("usage: %s INDEX", fields[0])
	}
	i, err := strconv.Atoi(fields[1])
	if err != nil || i < 0 || i >= len(c.Nodes) {
		return nil, fmt.Errorf("no node %q", fields[1])
	}
	node := c.Nodes[i]
	switch fields[0] {
	case "kill":
		err = node.Kill()
	case "freeze":
		err = node.Freeze()
	case "thaw":
		err = node.Thaw()
	case "restart":
		if clusterURL != "" {
			return nil, errors.New("restart: not supported with -cluster")
		}
		err = node.Restart()
	default:
		return nil, fmt.Errorf("unknown command %q", fields[0])
	}
	return map[string]any{"pid": node.PID()}, err
}

func infos(c *redistest.Cluster) []nodeInfo {
	out := make([]nodeInfo, len(c.Nodes))
	for i, node := range c.Nodes {
		out[i] = nodeInfo{Index: i, Port: node.Port, PID: node.PID(), URL: node.URL()}
	}
	return out
}

// checkPorts refuses ports outside 1-65535 and ports in use, naming them,
// before any node starts (a redis-server already on the port would answer
// for the new node).
func checkPorts(base, n int) error {
	if base < 1 || base+n-1 > 65535 {
		return fmt.Errorf("-port %d: the ports %d-%d must lie within 1-65535", base, base, base+n-1)
	}
	for p := base; p < base+n; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return fmt.Errorf("port %d is in use (%v): stop what listens there, or pick other ports with -port", p, err)
		}
		l.Close()
	}
	return nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "redisnodes:", err)
	os.Exit(1)
}
