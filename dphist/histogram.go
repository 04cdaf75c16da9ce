package dphist

import "fmt"

// Cells is the number of cells of the cross product of domains of the given sizes,
// or an error when it exceeds limit.
func Cells(sizes []int, limit int) (int, error) {
	n := 1
	for _, s := range sizes {
		if s < 1 {
			return 0, fmt.Errorf("a domain of %d values", s)
		}
		if n > limit/s {
			return 0, fmt.Errorf("the cross product of the domains has more than %d cells", limit)
		}
		n *= s
	}
	return n, nil
}

// Count counts records into the cells of the cross product of the columns' domains:
// cols[i][r] is record r's value number in column i's domain (0 … sizes[i]−1); cell
// (v₀, v₁, …) is v₀·sizes[1]·sizes[2]… + v₁·sizes[2]… + …. counts must have the product
// of sizes cells; it is added to.
func Count(counts []int64, cols [][]int32, sizes []int) {
	if len(cols) == 0 {
		return
	}
	n := len(cols[0])
	const chunk = 4096
	var idx [chunk]int32
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		cell := idx[:hi-lo]
		copy(cell, cols[0][lo:hi])
		for i := 1; i < len(cols); i++ {
			sz := int32(sizes[i])
			for j, v := range cols[i][lo:hi] {
				cell[j] = cell[j]*sz + v
			}
		}
		for _, c := range cell {
			counts[c]++
		}
	}
}

// Noisy returns the counts with noise from m added to every cell, empty cells too.
func Noisy(counts []int64, m Mechanism) ([]int64, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	out := make([]int64, len(counts))
	for i, c := range counts {
		v, err := m.Count(c)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// CountKept is Count restricted to the rows r with keep[r].
func CountKept(counts []int64, cols [][]int32, sizes []int, keep []bool) {
	for r, k := range keep {
		if !k {
			continue
		}
		c := int(cols[0][r])
		for i := 1; i < len(cols); i++ {
			c = c*sizes[i] + int(cols[i][r])
		}
		counts[c]++
	}
}

// Subsets returns every way-element subset of {0, …, n−1}, each ascending, in
// lexicographic order.
func Subsets(n, way int) [][]int {
	var out [][]int
	cur := make([]int, 0, way)
	var rec func(from int)
	rec = func(from int) {
		if len(cur) == way {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for i := from; i <= n-(way-len(cur)); i++ {
			cur = append(cur, i)
			rec(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	if way >= 0 && way <= n {
		rec(0)
	}
	return out
}
