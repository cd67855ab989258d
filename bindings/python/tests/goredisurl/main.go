// Command goredisurl is the reference for the Python binding's node URL parser
// (bindings/python/liblock/_nodeurl.py): for each JSON string read from stdin,
// one per line, it prints as one JSON line whether liblock's config check
// accepts the URL and what go-redis v9's ParseURL (the native backend's
// parser) reads from it. tests/test_nodeurl.py compares the two.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/liblock/liblock/core"
	"github.com/redis/go-redis/v9"
)

// result is one URL's reading; byte fields are hex, as Go strings may hold
// any bytes and JSON only valid UTF-8.
type result struct {
	Accepted   bool   `json:"accepted"` // by core.Config.Validate (what liblock.wasm checks)
	Error      string `json:"error,omitempty"`
	Network    string `json:"network,omitempty"`
	Addr       string `json:"addr,omitempty"`
	Username   string `json:"username"`
	Password   string `json:"password"`
	DB         int    `json:"db"`
	ClientName string `json:"client_name"`
	TLS        bool   `json:"tls"`
	SkipVerify bool   `json:"skip_verify"`
	ServerName string `json:"server_name,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var raw string
		if err := json.Unmarshal(in.Bytes(), &raw); err != nil {
			fmt.Fprintln(os.Stderr, "goredisurl: input line is not a JSON string:", err)
			os.Exit(2)
		}
		var r result
		r.Accepted = core.Config{Nodes: []string{raw}}.Validate() == nil
		opt, err := redis.ParseURL(raw)
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Network, r.Addr, r.DB = opt.Network, opt.Addr, opt.DB
			r.Username, r.Password = hex.EncodeToString([]byte(opt.Username)), hex.EncodeToString([]byte(opt.Password))
			r.ClientName = hex.EncodeToString([]byte(opt.ClientName))
			if opt.TLSConfig != nil {
				r.TLS, r.SkipVerify, r.ServerName = true, opt.TLSConfig.InsecureSkipVerify, opt.TLSConfig.ServerName
			}
		}
		if err := out.Encode(r); err != nil {
			os.Exit(1)
		}
	}
}
