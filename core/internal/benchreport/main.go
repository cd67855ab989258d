// Command benchreport reads `go test -bench` output on standard input,
// passes it through, and then prints, for every benchmark, the median of
// its p50-µs metric over the -count runs, and for every liblock benchmark
// its ratio to the baseline of the same group measured in the same run.
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	samples := map[string][]float64{}
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
			if fields[i+1] == "p50-µs" {
				v, err := strconv.ParseFloat(fields[i], 64)
				if err == nil {
					if _, seen := samples[name]; !seen {
						order = append(order, name)
					}
					samples[name] = append(samples[name], v)
				}
			}
		}
	}
	if len(order) == 0 {
		fmt.Fprintln(os.Stderr, "benchreport: no p50-µs results in the input")
		os.Exit(1)
	}
	fmt.Println()
	fmt.Printf("%-48s %12s %8s\n", "benchmark (median of runs)", "p50 µs/pair", "ratio")
	for _, name := range order {
		med := median(samples[name])
		ratio := ""
		if strings.HasSuffix(name, "/liblock") {
			base := strings.TrimSuffix(name, "/liblock") + "/go-redis-raw"
			if b, ok := samples[base]; ok {
				ratio = fmt.Sprintf("%.2f×", med/median(b))
			}
		}
		fmt.Printf("%-48s %12.1f %8s\n", name, med, ratio)
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
