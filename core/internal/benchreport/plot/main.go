package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/liblock/liblock/core/internal/benchreport/results"
)

func main() {
	in := flag.String("in", "build/bench", "directory of the parts' JSON files")
	out := flag.String("out", "", "directory for the SVGs and results.md (default: -in)")
	flag.Parse()
	if *out == "" {
		*out = *in
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	files, err := results.ReadDir(in)
	if err != nil {
		return err
	}
	charts := results.Charts(files)
	if len(charts) == 0 {
		return fmt.Errorf("no results in %s/*.json (run make bench, or one part of it)", in)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, c := range charts {
		if err := os.WriteFile(filepath.Join(out, c.Slug()+".svg"), results.SVG(c), 0o644); err != nil {
			return err
		}
	}
	md := filepath.Join(out, "results.md")
	if err := os.WriteFile(md, []byte(results.Table(charts)), 0o644); err != nil {
		return err
	}
	fmt.Printf("plot: %d charts from %d part(s) in %s: %s and %s/*.svg\n", len(charts), len(files), in, md, out)
	return nil
}
