package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine/nodeurl"
)

const doctorSynopsis = "liblock doctor [--json] [--nodes URL,...] [--node-timeout 50ms] [--timeout 2s] [--key-prefix P] [--wait-replicas N]"

// Doctor's statuses.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
)

// Clock offsets beyond these are a warning and a failure.
const (
	clockWarn = 100 * time.Millisecond
	clockFail = time.Second
)

// row is one line of doctor's report: a check on a node (or on the set).
type row struct {
	Node   string `json:"node"`
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// setNode is the Node of the rows about the whole set of nodes.
const setNode = "(all nodes)"

type doctorOpts struct {
	common
	timeout time.Duration
}

func doctorCmd(args []string, stdout, stderr io.Writer) int {
	o := &doctorOpts{timeout: 2 * time.Second}
	fs := newFlagSet("doctor")
	o.register(fs, true)
	fs.Var(durationFlag{&o.timeout}, "timeout", "bound of each of doctor's own requests to a node (a `duration` with a unit)")
	pos, err := parseInterleaved(fs, args)
	switch {
	case err == errHelp:
		err = &helpRequest{fs: fs, synopsis: doctorSynopsis}
	case err == nil && len(pos) > 0:
		err = usagef("takes no arguments, got %q", pos)
	case err == nil && o.timeout == 0:
		err = usagef("--timeout must be more than 0")
	}
	if code, done := handleParse(err, stdout, stderr, "doctor"); done {
		return code
	}
	cfg, err := o.config()
	if err != nil {
		return fail(stderr, "doctor", err)
	}
	rows := o.diagnose(cfg)
	fails := report(stdout, rows, o.json)
	if fails > 0 {
		return exitDoctorFail
	}
	return exitOK
}

// diagnose probes every node at once, then compares them.
func (o *doctorOpts) diagnose(cfg core.Config) []row {
	facts := make([]*nodeFacts, len(cfg.Nodes))
	var wg sync.WaitGroup
	for i, url := range cfg.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			facts[i] = o.probe(i, url, cfg)
		}()
	}
	wg.Wait()
	rows := []row{quorumRow(len(cfg.Nodes))}
	if len(cfg.Nodes) == 1 && nodeurl.IsFailover(cfg.Nodes[0]) {
		rows[0].Detail = "one Sentinel node (single-endpoint mode): the lock survives a failover only as far as WAIT got its grants to the promoted replica (best effort, not consensus)"
		rows[0].Fix = "for Redlock's guarantees use 3 or 5 independent primaries (each may be a Sentinel node)"
	}
	for _, f := range facts {
		rows = append(rows, f.rows...)
		if f.reachable {
			rows = append(rows, independenceRow(f, facts))
		}
	}
	if r, ok := clockSpreadRow(facts); ok {
		rows = append(rows, r)
	}
	return rows
}

func quorumRow(n int) row {
	r := row{Node: setNode, Check: "node count"}
	q := n/2 + 1
	switch {
	case n == 1:
		r.Status, r.Detail = statusWarn, "one node: no fault tolerance (the lock is as available as that node, and forgets with it)"
		r.Fix = "use 3 or 5 independent primaries"
	case n%2 == 0:
		r.Status, r.Detail = statusWarn, fmt.Sprintf("%d nodes, quorum %d: tolerates %d failed nodes, as %d nodes would", n, q, n-q, n-1)
		r.Fix = "use an odd number of nodes"
	default:
		r.Status, r.Detail = statusOK, fmt.Sprintf("%d nodes, quorum %d: tolerates %d failed node(s)", n, q, n-q)
	}
	return r
}

// independenceRow: no two listed nodes are one server, or replicas of one
// another (sharing a replication id or naming each other as primary).
func independenceRow(f *nodeFacts, all []*nodeFacts) row {
	r := row{Node: f.name, Check: "independent"}
	var why []string
	for _, g := range all {
		if g == f || !g.reachable {
			continue
		}
		switch {
		case f.runID != "" && f.runID == g.runID:
			why = append(why, fmt.Sprintf("the same server as %s (run_id %s)", g.name, f.runID))
		case f.replicaOf != "" && f.replicaOf == g.addr:
			why = append(why, fmt.Sprintf("a replica of %s", g.name))
		case g.replicaOf != "" && g.replicaOf == f.addr:
			why = append(why, fmt.Sprintf("the primary of %s", g.name))
		case f.replID != "" && f.replID == g.replID:
			why = append(why, fmt.Sprintf("in one replication set with %s (master_replid %s)", g.name, f.replID))
		}
	}
	if len(why) > 0 {
		r.Status = statusFail
		r.Detail = strings.Join(why, "; ") + ": a quorum counted on them is not a quorum of independent nodes"
		r.Fix = "list only independent primaries, each once"
		return r
	}
	if f.runID == "" {
		r.Status, r.Detail = statusWarn, "cannot tell (INFO not readable)"
		r.Fix = "allow INFO for this user, or check by hand that the nodes are distinct primaries"
		return r
	}
	r.Status, r.Detail = statusOK, "run_id "+short(f.runID)+" is not shared, no replication with another listed node"
	return r
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// clockSpreadRow compares the nodes' clock offsets with one another.
func clockSpreadRow(facts []*nodeFacts) (row, bool) {
	var lo, hi *nodeFacts
	for _, f := range facts {
		if !f.clockKnown {
			continue
		}
		if lo == nil || f.offset < lo.offset {
			lo = f
		}
		if hi == nil || f.offset > hi.offset {
			hi = f
		}
	}
	if lo == nil || lo == hi {
		return row{}, false
	}
	spread := hi.offset - lo.offset
	r := row{Node: setNode, Check: "clock spread"}
	r.Detail = fmt.Sprintf("%v between %s and %s", roundDur(spread), lo.name, hi.name)
	r.Status = clockStatus(spread)
	if r.Status != statusOK {
		r.Detail += ": " + clockWhy
		r.Fix = clockFix
	}
	return r, true
}

const (
	clockWhy = "clocks this far apart are not synchronised; Redis expires keys by its wall clock, and when such a clock is stepped to the right time, locks on it expire early (the drift factor covers clock rate, not offsets or steps); fences and election terms issued after a node's empty restart rely on the clocks agreeing within the largest ttl"
	clockFix = "run NTP (chrony) on every node, slewing rather than stepping"
)

func clockStatus(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d > clockFail:
		return statusFail
	case d > clockWarn:
		return statusWarn
	}
	return statusOK
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second || d <= -time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond || d <= -time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// report prints rows (a table, or JSON lines) and returns how many failed.
func report(w io.Writer, rows []row, asJSON bool) int {
	fails, warns := 0, 0
	for _, r := range rows {
		switch r.Status {
		case statusFail:
			fails++
		case statusWarn:
			warns++
		}
	}
	if asJSON {
		for _, r := range rows {
			writeJSON(w, r)
		}
		return fails
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tCHECK\tSTATUS\tDETAIL")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Node, r.Check, r.Status, r.Detail)
		if r.Fix != "" {
			fmt.Fprintf(tw, "\t\t\tfix: %s\n", r.Fix)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "%d checks: %d ok, %d warn, %d fail\n", len(rows), len(rows)-warns-fails, warns, fails)
	return fails
}
