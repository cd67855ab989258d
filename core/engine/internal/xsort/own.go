//go:build liblockwasm

package xsort

// Slice sorts x in place by less, which compares the elements at indexes i
// and j of x (sort.Slice's contract).
func Slice[S ~[]E, E any](x S, less func(i, j int) bool) {
	n := len(x)
	if n <= 12 { // sort.Slice's insertion sort (pdqsort's maxInsertion)
		for i := 1; i < n; i++ {
			for j := i; j > 0 && less(j, j-1); j-- {
				x[j], x[j-1] = x[j-1], x[j]
			}
		}
		return
	}
	// Heapsort: a max-heap by less, then the largest moved to the end.
	down := func(i, n int) {
		for {
			c := 2*i + 1
			if c >= n {
				return
			}
			if c+1 < n && less(c, c+1) {
				c++
			}
			if !less(i, c) {
				return
			}
			x[i], x[c] = x[c], x[i]
			i = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i, n)
	}
	for i := n - 1; i > 0; i-- {
		x[0], x[i] = x[i], x[0]
		down(0, i)
	}
}
