package results

import (
	"bytes"
	"encoding/xml"
	"fmt"
)

// The SVG layout: one horizontal bar per implementation (names are long),
// the name on the left, the median and its ratio to the best liblock bar
// on the right. liblock's bars are blue and their names bold; the peers'
// grey. Plain SVG 1.1, no script, no external font: it renders on GitHub.
const (
	svgWidth   = 820
	labelWidth = 250 // the names' column
	barArea    = 380 // the longest bar
	rowHeight  = 26
	barHeight  = 18
	topMargin  = 72 // title and two subtitle lines
	colLiblock = "#1f6feb"
	colPeer    = "#9aa0a6"
)

// SVG renders the chart.
func SVG(c Chart) []byte {
	var b bytes.Buffer
	height := topMargin + len(c.Bars)*rowHeight + 24
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="13">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, height)
	fmt.Fprintf(&b, `<text class="title" x="12" y="22" font-size="16" font-weight="bold">%s</text>`+"\n", esc(c.Title()))
	dir := "lower is better"
	if c.HigherIsBetter {
		dir = "higher is better"
	}
	best, _ := c.Best()
	fmt.Fprintf(&b, `<text class="subtitle" x="12" y="40" fill="#555555">%s; median per implementation, %s</text>`+"\n", esc(c.Unit), dir)
	fmt.Fprintf(&b, `<text class="subtitle" x="12" y="56" fill="#555555">ratios to the best liblock bar (%s); liblock's bars in blue</text>`+"\n", esc(best.Impl))
	top := 0.0
	for _, bar := range c.Bars {
		top = max(top, bar.Median)
	}
	for i, bar := range c.Bars {
		y := topMargin + i*rowHeight
		w := 1.0
		if top > 0 {
			w = max(1, bar.Median/top*barArea)
		}
		class, fill, weight := "bar peer", colPeer, "normal"
		if bar.Liblock {
			class, fill, weight = "bar liblock", colLiblock, "bold"
		}
		fmt.Fprintf(&b, `<text class="name" x="%d" y="%d" text-anchor="end" font-weight="%s">%s</text>`+"\n",
			labelWidth-8, y+barHeight-4, weight, esc(bar.Impl))
		fmt.Fprintf(&b, `<rect class="%s" x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`+"\n",
			class, labelWidth, y, w, barHeight, fill, esc(bar.Impl), number(bar.Median))
		label := number(bar.Median)
		if r, ok := c.Ratio(bar.Median); ok {
			label += fmt.Sprintf("  %.2f×", r)
		}
		fmt.Fprintf(&b, `<text class="value" x="%.1f" y="%d">%s</text>`+"\n", float64(labelWidth)+w+6, y+barHeight-4, esc(label))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", labelWidth, topMargin-4, labelWidth, topMargin+len(c.Bars)*rowHeight-4)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
