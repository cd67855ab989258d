//go:build liblockwasm

package xsort

// Slice sorts x in place by less, which compares the elements at indexes i
// and j of x (sort.Slice's contract).
func Slice[E any](x []E, less func(i, j int) bool) {
	sortIndexes(len(x), less, func(i, j int) { x[i], x[j] = x[j], x[i] })
}

// sortIndexes sorts n elements through less and swap: one copy of the code
// for every element type.
func sortIndexes(n int, less func(i, j int) bool, swap func(i, j int)) {
	if n <= 12 { // sort.Slice's insertion sort (pdqsort's maxInsertion)
		for i := 1; i < n; i++ {
			for j := i; j > 0 && less(j, j-1); j-- {
				swap(j, j-1)
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
			swap(i, c)
			i = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i, n)
	}
	for i := n - 1; i > 0; i-- {
		swap(0, i)
		down(0, i)
	}
}
