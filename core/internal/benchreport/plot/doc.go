// Command plot turns `make bench`'s results (build/bench/*.json, one file
// per part: see ../results) into build/bench/results.md (a table per
// scenario) and one SVG bar chart per scenario, liblock's bars marked,
// each bar labelled with its median and its ratio to the best liblock bar.
//
//	go run ./core/internal/benchreport/plot [-in build/bench] [-out build/bench]
//
// Layer: a benchmark tool, outside the library: it imports only the
// standard library and core/internal/benchreport/results; nothing imports
// it.
package main
