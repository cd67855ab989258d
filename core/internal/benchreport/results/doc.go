// Package results is the common form of `make bench`'s results: every part
// (Go, Node, Python, the wasm host) writes its rows as one JSON file under
// build/bench/, and the plot command (../plot) turns them into a Markdown
// table and one SVG bar chart per scenario, liblock beside the peers of the
// same language and run. Stdlib only, so that the bench needs nothing more.
//
// A file is {"part": "node", "rows": [Row, ...]}; a scenario may hold
// several rows of one implementation (one per run): the chart shows their
// median.
//
// Layer: benchmark tooling, outside the library: it imports only the
// standard library; the benchmark reporters (benchreport, plot, the
// benchmarks' tests) import it.
package results
