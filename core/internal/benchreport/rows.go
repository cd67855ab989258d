package main

import (
	"strings"

	"github.com/liblock/liblock/core/internal/benchreport/results"
)

// writeRows writes every sample as a results row: pair latencies (p50-µs;
// not the alternating A/B benchmark, whose two sides are one bar's
// business) per group, and BenchmarkContention's sections/s. In Go, the
// only bar not liblock's is the hand-written go-redis baseline
// (…/go-redis-raw); the wasm host's rows (…/native, …/wasm) are all
// liblock's.
func writeRows(path, part string, samples map[string]metrics, order []string) error {
	f := results.File{Part: part}
	for _, name := range order {
		m := samples[name]
		group, leaf, ok := cut(name)
		if !ok {
			continue
		}
		liblock := !strings.HasPrefix(leaf, "go-redis")
		if _, ab := m["single-p50-µs"]; !ab {
			for _, v := range m["p50-µs"] {
				f.Rows = append(f.Rows, results.Row{Scenario: scenario(group), Unit: "µs per acquire+release pair (p50)", Impl: leaf, Value: v, Liblock: liblock})
			}
		}
		for _, v := range m["sections/s"] {
			f.Rows = append(f.Rows, results.Row{Scenario: scenario(group), Unit: "sections/s (10 contenders, 1 ms sections)", Impl: leaf, Value: v, Liblock: liblock, HigherIsBetter: true})
		}
	}
	return results.Write(path, f)
}

// scenario names a benchmark group for a chart: BenchmarkPair/nodes=5 is
// "pair, 5 nodes"; nodes=5-frozen1 "pair, 5 nodes, one frozen".
func scenario(group string) string {
	s := strings.TrimPrefix(group, "Benchmark")
	kind, rest, _ := strings.Cut(s, "/")
	kind = strings.ToLower(kind)
	n, ok := strings.CutPrefix(rest, "nodes=") // core's BenchmarkPair/nodes=5
	if !ok {
		n, ok = strings.CutSuffix(rest, "-nodes") // the wasm host's BenchmarkPair/5-nodes
	}
	if ok {
		frozen := ""
		if m, ok := strings.CutSuffix(n, "-frozen1"); ok {
			n, frozen = m, ", one frozen"
		}
		unit := " nodes"
		if n == "1" {
			unit = " node"
		}
		return kind + ", " + n + unit + frozen
	}
	switch {
	case kind == "contention" && rest == "":
		return "contention, 10 contenders, 3 nodes"
	case rest != "":
		return kind + ", " + rest
	}
	return kind
}
