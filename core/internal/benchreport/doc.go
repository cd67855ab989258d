// Command benchreport reads `go test -bench` output on standard input,
// passes it through, and then prints, for every benchmark, the median of
// its p50-µs metric (and of its cpu-µs metric, process CPU per pair, when
// reported) over the -count runs, and for every liblock benchmark
// (…/liblock, …/liblock-<variant>) the ratios to the baseline of the same
// group (…/go-redis-raw) measured in the same run; …/liblock-wait (a wait
// budget that goes unused) is compared with the group's …/liblock (one
// attempt), and a …-frozen1 group (one node frozen) with the healthy
// group's pair. A benchmark that also reports single-p50-µs and
// single-cpu-µs (an alternating A/B loop) is compared with those.
// The primitives beyond the mutex (…/liblock-semaphore*, -read, -write,
// -multi*) are also printed beside their group's mutex pair (…/liblock)
// with that ratio, and BenchmarkContention's sections/s and least-share
// (10 contenders) beside its …/mutex row. With -json FILE it also writes
// every sample as results rows (rows.go) for the plots of make bench.
//
// Layer: a benchmark tool, outside the library: it imports only the
// standard library and core/internal/benchreport/results; nothing imports
// it.
package main
