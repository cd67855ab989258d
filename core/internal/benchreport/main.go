package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// metrics holds one benchmark's samples per unit.
type metrics map[string][]float64

func main() {
	jsonOut := flag.String("json", "", "also write the samples as results rows (build/bench/go.json) for the plots")
	part := flag.String("part", "go", "the part's name in the -json file")
	flag.Parse()
	samples := map[string]metrics{}
	var order []string
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		line := in.Text()
		fmt.Println(line)
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := fields[0]
		if i := strings.LastIndex(name, "-"); i > 0 { // strip -GOMAXPROCS
			name = name[:i]
		}
		for i := 2; i+1 < len(fields); i++ {
			unit := fields[i+1]
			if unit != "p50-µs" && unit != "cpu-µs" && unit != "single-p50-µs" && unit != "single-cpu-µs" &&
				unit != "sections/s" && unit != "least-share" && unit != "release-retries" {
				continue
			}
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			if _, seen := samples[name]; !seen {
				order = append(order, name)
				samples[name] = metrics{}
			}
			samples[name][unit] = append(samples[name][unit], v)
		}
	}
	if len(order) == 0 {
		fmt.Fprintln(os.Stderr, "benchreport: no p50-µs or sections/s results in the input")
		os.Exit(1)
	}
	pairs(samples, order)
	primitives(samples, order)
	contention(samples, order)
	if *jsonOut != "" {
		if err := writeRows(*jsonOut, *part, samples, order); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
			os.Exit(1)
		}
	}
}

// pairs prints the pair benchmarks' medians and their ratios to their
// baselines.
func pairs(samples map[string]metrics, order []string) {
	order = slices.DeleteFunc(slices.Clone(order), func(name string) bool { return len(samples[name]["p50-µs"]) == 0 })
	if len(order) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("ratios: to go-redis-raw of the group; liblock-wait to liblock (one attempt); …-frozen1 to the healthy pair;")
	fmt.Println("        PairUnusedWait: pairs with an unused 10 s wait to single attempts, alternating in one loop;")
	fmt.Println("        SemaphorePairAB: the 3-permit semaphore's pair to the mutex pair, alternating in one loop")
	fmt.Printf("%-48s %12s %8s %12s %8s\n", "benchmark (median of runs)", "p50 µs/pair", "ratio", "cpu µs/pair", "ratio")
	for _, name := range order {
		var base metrics
		if group, leaf, ok := cut(name); ok && strings.HasPrefix(leaf, "liblock") {
			base = samples[group+"/go-redis-raw"]
			if leaf == "liblock-wait" {
				base = samples[group+"/liblock"]
			}
			if healthy, frozen := strings.CutSuffix(group, "-frozen1"); frozen {
				// With a node frozen, the baseline is the healthy pair.
				base = samples[healthy+"/"+leaf]
			}
		}
		if _, ab := samples[name]["single-p50-µs"]; ab {
			// An alternating A/B benchmark (BenchmarkPairUnusedWait): the
			// ratios are to its own single-attempt pairs.
			base = metrics{"p50-µs": samples[name]["single-p50-µs"], "cpu-µs": samples[name]["single-cpu-µs"]}
		}
		fmt.Printf("%-48s", name)
		for _, unit := range []string{"p50-µs", "cpu-µs"} {
			v := samples[name][unit]
			if len(v) == 0 {
				fmt.Printf(" %12s %8s", "-", "")
				continue
			}
			ratio := ""
			if b := base[unit]; len(b) > 0 {
				ratio = fmt.Sprintf("%.2f×", median(v)/median(b))
			}
			fmt.Printf(" %12.1f %8s", median(v), ratio)
		}
		fmt.Println()
	}
}

// primitive reports whether a BenchmarkPair leaf is one of the
// primitives (semaphore, read-write lock, multi-resource lock), which is
// also compared with the mutex pair of its group.
func primitive(leaf string) bool {
	for _, p := range []string{"liblock-semaphore", "liblock-read", "liblock-write", "liblock-multi"} {
		if strings.HasPrefix(leaf, p) {
			return true
		}
	}
	return false
}

// primitives prints, for every primitive's pair, its median beside the
// mutex pair of the same group and run (…/liblock) and the ratio (issue
// 20's target: ≤ 1.2× the mutex pair). The table above keeps their ratios
// to go-redis-raw.
func primitives(samples map[string]metrics, order []string) {
	header := false
	for _, name := range order {
		group, leaf, ok := cut(name)
		mutex := samples[group+"/liblock"]
		if !ok || !primitive(leaf) || len(mutex["p50-µs"]) == 0 || len(samples[name]["p50-µs"]) == 0 {
			continue
		}
		if !header {
			fmt.Println()
			fmt.Println("new primitives beside the mutex pair of the same group and run (…/liblock, one attempt)")
			fmt.Printf("%-48s %12s %12s %8s %12s %8s\n", "benchmark (median of runs)", "p50 µs/pair", "mutex p50", "ratio", "cpu µs/pair", "ratio")
			header = true
		}
		v, m := median(samples[name]["p50-µs"]), median(mutex["p50-µs"])
		fmt.Printf("%-48s %12.1f %12.1f %8s", name, v, m, fmt.Sprintf("%.2f×", v/m))
		if c, mc := samples[name]["cpu-µs"], mutex["cpu-µs"]; len(c) > 0 && len(mc) > 0 {
			fmt.Printf(" %12.1f %8s", median(c), fmt.Sprintf("%.2f×", median(c)/median(mc)))
		}
		fmt.Println()
	}
}

// contention prints BenchmarkContention's rows: the median sections/s
// over the runs with its ratio to the mutex's, and the least contender's
// share of a fair share (the median over the runs, and the lowest run),
// and the releases retried after ErrUnavailable (all runs).
// The aims for the 3-permit semaphore: ≥ 2.5× the mutex's
// sections/s, least share ≥ 0.08.
func contention(samples map[string]metrics, order []string) {
	header := false
	for _, name := range order {
		v := samples[name]["sections/s"]
		if len(v) == 0 {
			continue
		}
		group, _, _ := cut(name)
		if !header {
			fmt.Println()
			fmt.Println("contention: 10 contenders, 3 nodes, 1 ms sections; sections/s (ratio to the mutex of the same run),")
			fmt.Println("            the least contender's share of a fair share (1.00: even), median over runs and lowest run")
			fmt.Printf("%-48s %12s %8s %12s %8s %8s\n", "benchmark (median of runs)", "sections/s", "ratio", "least share", "lowest", "retries")
			header = true
		}
		ratio := ""
		if m := samples[group+"/mutex"]["sections/s"]; len(m) > 0 {
			ratio = fmt.Sprintf("%.2f×", median(v)/median(m))
		}
		least := samples[name]["least-share"]
		fmt.Printf("%-48s %12.0f %8s", name, median(v), ratio)
		if len(least) > 0 {
			fmt.Printf(" %12.2f %8.2f", median(least), slices.Min(least))
		}
		if r := samples[name]["release-retries"]; len(r) > 0 {
			sum := 0.0
			for _, x := range r {
				sum += x
			}
			fmt.Printf(" %8.0f", sum)
		}
		fmt.Println()
	}
}

// cut splits "BenchmarkPair/nodes=1/liblock" into its group and leaf.
func cut(name string) (group, leaf string, ok bool) {
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
