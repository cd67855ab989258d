package main

import (
	"bufio"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/liblock/liblock/core/testkit/redistest/faultproxy"
)

type routes []faultproxy.Route

func (r *routes) String() string { return fmt.Sprint(*r) }

func (r *routes) Set(s string) error {
	addr, pid, ok := strings.Cut(s, "=")
	n, err := strconv.Atoi(pid)
	if !ok || addr == "" || err != nil || n <= 0 {
		return fmt.Errorf("want HOST:PORT=PID, got %q", s)
	}
	*r = append(*r, faultproxy.Route{Target: addr, PID: n})
	return nil
}

func main() {
	var rs routes
	flag.Var(&rs, "route", "HOST:PORT=PID: a node and its process (repeatable)")
	sig := flag.String("signal", "", "STOP or KILL")
	faults := flag.Int("faults", 1, "how many routes may be signalled")
	fence := flag.Bool("fence", false, "match the fence round's command (fence.lua by EVALSHA or EVAL)")
	match := flag.String("match", "", "comma-separated hex-encoded patterns")
	flag.Parse()

	cfg := faultproxy.Config{Routes: rs, Faults: *faults}
	switch strings.ToUpper(strings.TrimPrefix(strings.ToUpper(*sig), "SIG")) {
	case "STOP":
		cfg.Signal = syscall.SIGSTOP
	case "KILL":
		cfg.Signal = syscall.SIGKILL
	default:
		fatal(fmt.Errorf("-signal %q: want STOP or KILL", *sig))
	}
	if *fence {
		cfg.Patterns = faultproxy.FencePatterns()
	}
	if *match != "" {
		for _, h := range strings.Split(*match, ",") {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) == 0 {
				fatal(fmt.Errorf("-match %q: not a hex string", h))
			}
			cfg.Patterns = append(cfg.Patterns, b)
		}
	}
	p, err := faultproxy.Start(cfg)
	if err != nil {
		fatal(err)
	}
	defer p.Close()
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, strings.Join(p.Addrs(), " "))
	_ = out.Flush()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-sigs; p.Close(); os.Exit(0) }()

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch strings.TrimSpace(in.Text()) {
		case "":
		case "fired":
			f := []string{"fired"}
			for _, r := range p.Fired() {
				f = append(f, strconv.Itoa(r))
			}
			fmt.Fprintln(out, strings.Join(f, " "))
		default:
			fmt.Fprintf(out, "error: unknown command %q\n", in.Text())
		}
		_ = out.Flush()
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "faultproxy:", err)
	os.Exit(2)
}
