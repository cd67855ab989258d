package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/liblock/liblock/core"
)

type config struct {
	URLs     []string `json:"urls"`
	Resource string   `json:"resource"`
	TTL      int64    `json:"ttl"`
	Token    string   `json:"token"`
	Owner    string   `json:"owner"`
}

func say(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

func code(err error) string {
	switch {
	case errors.Is(err, core.ErrNotAcquired):
		return "NOT_ACQUIRED"
	case errors.Is(err, core.ErrLost):
		return "LOST"
	case errors.Is(err, core.ErrUnavailable):
		return "UNAVAILABLE"
	}
	return err.Error()
}

func main() {
	var cfg config
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: interop-child-go JSON")
		os.Exit(2)
	}
	if err := json.Unmarshal([]byte(os.Args[1]), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	client, err := core.New(core.Config{Nodes: cfg.URLs, NodeTimeout: 500 * time.Millisecond, Owner: cfg.Owner})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	var opts []core.AcquireOption
	if cfg.Token != "" {
		opts = append(opts, core.WithToken(cfg.Token))
	}
	lock, err := client.Acquire(ctx, cfg.Resource, time.Duration(cfg.TTL)*time.Millisecond, opts...)
	if err != nil {
		say(map[string]any{"ok": false, "code": code(err), "message": err.Error()})
	} else {
		say(map[string]any{"ok": true, "runtime": "go", "backend": "go", "token": lock.Token(), "reentered": lock.Reentered(),
			"fence": lock.Fence(), "validity": lock.Validity().Milliseconds()})
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch cmd := strings.TrimSpace(in.Text()); cmd {
		case "inspect":
			got, err := client.Inspect(ctx, cfg.Resource)
			if err != nil {
				say(map[string]any{"error": err.Error()})
				continue
			}
			var validity any = got.Validity.Milliseconds()
			if got.Validity == core.NoExpiry {
				validity = nil
			}
			say(map[string]any{"held": got.Held, "owner": got.Owner, "validity": validity})
		case "release":
			if lock == nil {
				say(map[string]any{"released": false, "code": "NO_LOCK"})
			} else if err := lock.Release(ctx); err != nil {
				say(map[string]any{"released": false, "code": code(err)})
			} else {
				say(map[string]any{"released": true})
			}
		case "close":
			client.Close()
			say(map[string]any{"closed": true})
			return
		default:
			say(map[string]any{"error": fmt.Sprintf("unknown command %q", cmd)})
		}
	}
	client.Close()
	say(map[string]any{"closed": true})
}
