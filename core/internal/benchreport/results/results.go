package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Row is one measurement: one implementation in one scenario.
type Row struct {
	// Scenario names what was measured ("pair, 5 nodes"); with Unit it
	// makes a chart.
	Scenario string `json:"scenario"`
	// Unit of Value ("µs per pair (p50)", "locks/s").
	Unit string `json:"unit"`
	// Impl is the implementation ("liblock native", "node-redlock").
	Impl  string  `json:"impl"`
	Value float64 `json:"value"`
	// Liblock marks liblock's own bars (the chart colours them).
	Liblock bool `json:"liblock"`
	// HigherIsBetter: throughput (true) rather than latency (false).
	HigherIsBetter bool `json:"higher_is_better,omitempty"`
}

// File is one part's results.
type File struct {
	Part string `json:"part"`
	Rows []Row  `json:"rows"`
}

// Write writes f to path (its directory is created).
func Write(path string, f File) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadDir reads every *.json file of dir, in name order.
func ReadDir(dir string) ([]File, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []File
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var f File
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if f.Part == "" {
			f.Part = strings.TrimSuffix(filepath.Base(p), ".json")
		}
		out = append(out, f)
	}
	return out, nil
}

// Bar is one implementation's median in a chart.
type Bar struct {
	Impl    string
	Median  float64
	Runs    int // how many rows the median is of
	Liblock bool
}

// Chart is one scenario of one part: the bars in the order the part first
// wrote them.
type Chart struct {
	Part, Scenario, Unit string
	HigherIsBetter       bool
	Bars                 []Bar
}

// Title is the chart's heading.
func (c Chart) Title() string { return c.Part + ": " + c.Scenario }

// Slug is the chart's file name stem: part and scenario, lower case,
// [a-z0-9-] only (a part names each scenario once, whatever its unit).
func (c Chart) Slug() string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(c.Part + "-" + c.Scenario) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// Best returns the best liblock bar (the lowest, or the highest when
// higher is better), the one ratios are taken to; ok is false when the
// chart has no liblock bar (then it is the best bar of all).
func (c Chart) Best() (best Bar, ok bool) {
	pick := func(liblockOnly bool) (Bar, bool) {
		var best Bar
		found := false
		for _, b := range c.Bars {
			if liblockOnly && !b.Liblock {
				continue
			}
			if !found || (c.HigherIsBetter && b.Median > best.Median) || (!c.HigherIsBetter && b.Median < best.Median) {
				best, found = b, true
			}
		}
		return best, found
	}
	if b, ok := pick(true); ok {
		return b, true
	}
	best, _ = pick(false)
	return best, false
}

// Charts groups the files' rows by part, scenario and unit, each
// implementation's rows into its median.
func Charts(files []File) []Chart {
	var out []Chart
	for _, f := range files {
		type key struct{ scenario, unit string }
		index := map[key]int{}
		values := map[key]map[string][]float64{}
		for _, r := range f.Rows {
			k := key{r.Scenario, r.Unit}
			i, seen := index[k]
			if !seen {
				i = len(out)
				index[k] = i
				values[k] = map[string][]float64{}
				out = append(out, Chart{Part: f.Part, Scenario: r.Scenario, Unit: r.Unit, HigherIsBetter: r.HigherIsBetter})
			}
			if _, seen := values[k][r.Impl]; !seen {
				out[i].Bars = append(out[i].Bars, Bar{Impl: r.Impl, Liblock: r.Liblock})
			}
			values[k][r.Impl] = append(values[k][r.Impl], r.Value)
		}
		for k, i := range index {
			for j := range out[i].Bars {
				v := values[k][out[i].Bars[j].Impl]
				out[i].Bars[j].Median, out[i].Bars[j].Runs = median(v), len(v)
			}
		}
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Ratio is v over the chart's best liblock bar, so that a peer's label
// says how many times liblock's figure it is ("2.10×": it takes 2.1 times
// liblock's latency, or does 2.1 times its throughput).
func (c Chart) Ratio(v float64) (float64, bool) {
	best, _ := c.Best()
	if best.Median == 0 {
		return 0, false
	}
	return v / best.Median, true
}

// Table writes the charts as Markdown: one table per chart, each bar's
// median, runs and ratio, and the SVG beside it.
func Table(charts []Chart) string {
	var b strings.Builder
	b.WriteString("# liblock benchmark results\n\nMedians per implementation; ratios are to the best liblock bar of the same chart (same run).\n")
	for _, c := range charts {
		dir := "lower is better"
		if c.HigherIsBetter {
			dir = "higher is better"
		}
		fmt.Fprintf(&b, "\n## %s (%s, %s)\n\n![%s](%s.svg)\n\n| implementation | median | runs | ratio |\n|---|---:|---:|---:|\n",
			c.Title(), c.Unit, dir, c.Title(), c.Slug())
		for _, bar := range c.Bars {
			name := bar.Impl
			if bar.Liblock {
				name = "**" + name + "**"
			}
			ratio := "-"
			if r, ok := c.Ratio(bar.Median); ok {
				ratio = fmt.Sprintf("%.2f×", r)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", name, number(bar.Median), bar.Runs, ratio)
		}
	}
	return b.String()
}

// number prints a figure with about three significant digits.
func number(v float64) string {
	switch a := abs(v); {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
