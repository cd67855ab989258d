package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/liblock/liblock/core"
)

const inspectSynopsis = "liblock inspect [--json] [--permits N | --rw] [--nodes URL,...] [--node-timeout 50ms] [--key-prefix P] NAME..."

// inspectJSON is one line of `inspect --json`.
type inspectJSON struct {
	Resource   string     `json:"resource"`
	Held       bool       `json:"held"`
	ValidityMS *int64     `json:"validity_ms"` // null: no expiry
	Owner      string     `json:"owner"`
	Nodes      []nodeJSON `json:"nodes,omitempty"`
	Error      string     `json:"error,omitempty"`
	// --permits N (inspect_kinds.go): the count, permits held on a quorum,
	// and those permits; --rw: the readers (the writer is Held/Owner).
	Permits int          `json:"permits,omitempty"`
	InUse   *int         `json:"in_use,omitempty"`
	Holders []holderJSON `json:"holders,omitempty"`
	Readers []readerJSON `json:"readers,omitempty"`
}

type nodeJSON struct {
	Node   int    `json:"node"`
	Addr   string `json:"addr"`
	Locked bool   `json:"locked"`
	Holder bool   `json:"holder"`
	Owner  string `json:"owner"`
	TTLMS  *int64 `json:"ttl_ms"` // null: no expiry, or not locked
	Error  string `json:"error,omitempty"`
}

func inspectCmd(args []string, stdout, stderr io.Writer) int {
	var c common
	fs := newFlagSet("inspect")
	c.register(fs, true)
	var kind kindOpts
	kind.register(fs, false)
	rw := fs.Bool("rw", false, "inspect NAME's read-write lock: its writer and its readers")
	names, err := parseInterleaved(fs, args)
	var opts []core.InspectOption
	if err == nil {
		opts, err = inspectOptions(&kind, *rw)
	}
	if err == errHelp {
		err = &helpRequest{fs: fs, synopsis: inspectSynopsis}
	} else if err == nil && len(names) == 0 {
		err = usagef("missing NAME (%s)", inspectSynopsis)
	}
	if code, done := handleParse(err, stdout, stderr, "inspect"); done {
		return code
	}
	client, code := c.client("inspect", stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	code = exitOK
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if h := kindHeader(&kind, *rw); h != "" && !c.json {
		fmt.Fprintln(tw, h)
	} else if !c.json {
		fmt.Fprintln(tw, "NAME\tHELD\tVALIDITY\tOWNER\tNODE\tKEY\tTTL\t")
	}
	for _, name := range names {
		in, err := client.Inspect(context.Background(), name, opts...)
		if err != nil {
			code = max(code, exitFor(argUsage(err)))
			if c.json {
				writeJSON(stdout, inspectJSON{Resource: name, Error: err.Error()})
			} else {
				fmt.Fprintf(stderr, "liblock inspect: %s\n", errText(err))
				if h := hint(err); h != "" {
					fmt.Fprintf(stderr, "fix: %s\n", h)
				}
			}
			continue
		}
		if c.json {
			out := toJSON(name, in)
			addKindJSON(&out, in, &kind, *rw)
			writeJSON(stdout, out)
			continue
		}
		if kindRows(tw, name, in, &kind, *rw) {
			continue
		}
		for i, n := range in.Nodes {
			first := [4]string{name, yesNo(in.Held), validity(in), dash(in.Owner)}
			if i > 0 {
				first = [4]string{"", "", "", ""}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", first[0], first[1], first[2], first[3], n.Addr, nodeKey(n), nodeTTL(n))
		}
	}
	tw.Flush()
	if code != exitOK && !c.json {
		fmt.Fprintf(stderr, "liblock inspect: exit %d\n", code)
	}
	return code
}

func toJSON(name string, in *core.Inspection) inspectJSON {
	out := inspectJSON{Resource: name, Held: in.Held, Owner: in.Owner, ValidityMS: ms(in.Validity)}
	for _, n := range in.Nodes {
		nj := nodeJSON{Node: n.Node, Addr: n.Addr, Locked: n.Locked, Holder: n.Holder, Owner: n.Owner}
		if n.Locked {
			nj.TTLMS = ms(n.TTL)
		}
		if n.Err != nil {
			nj.Error = n.Err.Error()
		}
		out.Nodes = append(out.Nodes, nj)
	}
	return out
}

func ms(d time.Duration) *int64 {
	if d == core.NoExpiry {
		return nil
	}
	v := d.Milliseconds()
	return &v
}

func writeJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s\n", b)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func validity(in *core.Inspection) string {
	switch {
	case in.Validity == core.NoExpiry:
		return "no expiry"
	case !in.Held:
		return "-"
	}
	return in.Validity.Round(time.Millisecond).String()
}

func nodeKey(n core.NodeState) string {
	switch {
	case n.Err != nil:
		return "error: " + strings.ReplaceAll(n.Err.Error(), "\t", " ")
	case !n.Locked:
		return "free"
	case n.Holder:
		return "holder"
	}
	return "other value"
}

func nodeTTL(n core.NodeState) string {
	switch {
	case n.Err != nil || !n.Locked:
		return "-"
	case n.TTL == core.NoExpiry:
		return "no expiry"
	}
	return n.TTL.Round(time.Millisecond).String()
}
