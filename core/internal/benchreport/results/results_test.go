package results

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture: a latency chart (liblock's two runs, medians 100 and 80; a peer
// at 200 with a name to escape) and a throughput chart.
func fixture() File {
	return File{Part: "node", Rows: []Row{
		{Scenario: "pair, 5 nodes", Unit: "µs per pair", Impl: "liblock native", Value: 90, Liblock: true},
		{Scenario: "pair, 5 nodes", Unit: "µs per pair", Impl: "liblock native", Value: 110, Liblock: true},
		{Scenario: "pair, 5 nodes", Unit: "µs per pair", Impl: "liblock wasm", Value: 120, Liblock: true},
		{Scenario: "pair, 5 nodes", Unit: "µs per pair", Impl: "peer <a&b>", Value: 200},
		{Scenario: "pair, 5 nodes", Unit: "µs per pair", Impl: "liblock wasm", Value: 140, Liblock: true},
		{Scenario: "32 resources", Unit: "locks/s", Impl: "liblock native", Value: 3000, Liblock: true, HigherIsBetter: true},
		{Scenario: "32 resources", Unit: "locks/s", Impl: "redis-semaphore", Value: 1500, HigherIsBetter: true},
	}}
}

func TestCharts(t *testing.T) {
	charts := Charts([]File{fixture()})
	require.Len(t, charts, 2)
	c := charts[0]
	assert.Equal(t, "node: pair, 5 nodes", c.Title())
	assert.Equal(t, "node-pair-5-nodes", c.Slug())
	require.Len(t, c.Bars, 3, "one bar per implementation, in first-seen order")
	assert.Equal(t, Bar{Impl: "liblock native", Median: 100, Runs: 2, Liblock: true}, c.Bars[0])
	assert.Equal(t, Bar{Impl: "liblock wasm", Median: 130, Runs: 2, Liblock: true}, c.Bars[1])
	assert.Equal(t, Bar{Impl: "peer <a&b>", Median: 200, Runs: 1}, c.Bars[2])
	best, ok := c.Best()
	assert.True(t, ok)
	assert.Equal(t, "liblock native", best.Impl, "lower is better: the lowest liblock bar")
	r, _ := c.Ratio(200)
	assert.InDelta(t, 2.0, r, 1e-9)

	tp := charts[1]
	assert.True(t, tp.HigherIsBetter)
	best, ok = tp.Best()
	assert.True(t, ok)
	assert.Equal(t, 3000.0, best.Median, "higher is better: the highest liblock bar")
	r, _ = tp.Ratio(1500)
	assert.InDelta(t, 0.5, r, 1e-9)

	// No liblock bar: ratios to the best bar of all.
	only := Chart{Bars: []Bar{{Impl: "a", Median: 4}, {Impl: "b", Median: 2}}}
	best, ok = only.Best()
	assert.False(t, ok)
	assert.Equal(t, "b", best.Impl)
}

// svgBar is a bar as the SVG draws it.
type svgBar struct {
	class string
	width float64
}

// decodeSVG reads b as XML with an <svg> root in the SVG namespace, and
// returns its bars and texts; an error if it is not that.
func decodeSVG(b []byte) (bars []svgBar, texts []string, err error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local + " " + el.Name.Space
			}
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			if el.Name.Local == "rect" && strings.HasPrefix(attr["class"], "bar") {
				w, err := strconv.ParseFloat(attr["width"], 64)
				if err != nil {
					return nil, nil, err
				}
				bars = append(bars, svgBar{class: attr["class"], width: w})
			}
			inText = el.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(el))
			}
		case xml.EndElement:
			inText = false
		}
	}
	if root != "svg http://www.w3.org/2000/svg" {
		return nil, nil, errors.New("root element " + root + ", want svg in the SVG namespace")
	}
	return bars, texts, nil
}

// TestSVG: the fixed input gives valid SVG (names escaped) with one bar
// per implementation, liblock's marked, lengths proportional to the
// medians, and each labelled with its median and ratio.
func TestSVG(t *testing.T) {
	c := Charts([]File{fixture()})[0]
	b := SVG(c)
	bars, texts, err := decodeSVG(b)
	require.NoError(t, err, "not valid SVG:\n%s", b)
	require.Len(t, bars, 3, "one bar per implementation")
	assert.Equal(t, "bar liblock", bars[0].class)
	assert.Equal(t, "bar liblock", bars[1].class)
	assert.Equal(t, "bar peer", bars[2].class, "the peer's bar is not liblock's")
	assert.InDelta(t, barArea, bars[2].width, 0.1, "the largest median is the longest bar")
	assert.InDelta(t, barArea/2, bars[0].width, 0.1, "100 of 200: half")
	assert.InDelta(t, barArea*130/200, bars[1].width, 0.1)
	all := strings.Join(texts, "|")
	for _, want := range []string{"node: pair, 5 nodes", "peer <a&b>", "100  1.00×", "130  1.30×", "200  2.00×", "lower is better", "ratios to the best liblock bar (liblock native)"} {
		assert.Contains(t, all, want)
	}

	// The negative control: the same chart with its names unescaped is
	// not valid SVG, and the check above says so.
	broken := bytes.ReplaceAll(b, []byte("peer &lt;a&amp;b&gt;"), []byte("peer <a&b>"))
	require.NotEqual(t, b, broken, "the fixture's name was escaped")
	_, _, err = decodeSVG(broken)
	assert.Error(t, err, "an unescaped name passed as valid SVG")
}

// TestTableAndFiles: Write then ReadDir round-trips, and the table lists
// every bar with its ratio, liblock's in bold.
func TestTableAndFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Write(filepath.Join(dir, "sub", "node.json"), fixture()))
	files, err := ReadDir(filepath.Join(dir, "sub"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, fixture(), files[0])
	md := Table(Charts(files))
	for _, want := range []string{"## node: pair, 5 nodes (µs per pair, lower is better)", "![node: pair, 5 nodes](node-pair-5-nodes.svg)",
		"| **liblock native** | 100 | 2 | 1.00× |", "| peer <a&b> | 200 | 1 | 2.00× |", "| redis-semaphore | 1500 | 1 | 0.50× |"} {
		assert.Contains(t, md, want)
	}
}
