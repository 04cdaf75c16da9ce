// Package pgm holds discrete graphical models over a fixed domain: junction trees,
// marginal inference, estimation from noisy marginal measurements (Private-PGM's
// mirror descent), sampling records, and moving sampled records towards the model's
// marginals (Refine). It is numeric code over attribute indexes and cell counts: it
// knows nothing of columns, values, privacy budgets or files.
//
// It imports, of this module, only internal/safe (docs/design.md's package table);
// dphist builds its synthetic records on it.
package pgm

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Domain lists the number of values of each attribute: attribute i takes
// the values 0..Domain[i]-1.
type Domain []int

// Measurement is a noisy marginal of the private table: Y holds the noisy
// counts of the marginal over Clique (a sorted set of distinct attributes),
// laid out row-major with the first attribute most significant, and Sigma is
// the standard deviation of the Gaussian noise added to each count.
type Measurement struct {
	Clique []int
	Y      []float64
	Sigma  float64
}

// maxModelCells bounds the number of float64 cells a model (or one
// intermediate table) may use, so that absurd clique sets yield an error
// rather than an allocation failure.
const maxModelCells = 1 << 28

// maxCliqueAttrs bounds the number of attributes of size > 1 in one table;
// any table within maxModelCells has fewer.
const maxCliqueAttrs = 64

// validate checks that the domain is usable.
func (d Domain) validate() error {
	if len(d) == 0 {
		return errors.New("pgm: empty domain")
	}
	for i, s := range d {
		if s < 1 {
			return fmt.Errorf("pgm: domain attribute %d has size %d, want >= 1", i, s)
		}
	}
	return nil
}

// checkSet checks that c is a sorted set of distinct attributes of d.
func (d Domain) checkSet(c []int) error {
	for i, a := range c {
		if a < 0 || a >= len(d) {
			return fmt.Errorf("pgm: attribute %d out of range [0,%d) in set %v", a, len(d), c)
		}
		if i > 0 && c[i-1] >= a {
			if c[i-1] == a {
				return fmt.Errorf("pgm: duplicated attribute %d in set %v", a, c)
			}
			return fmt.Errorf("pgm: attributes not sorted in set %v", c)
		}
	}
	return nil
}

// cells returns the number of cells of the table over c, saturating at
// math.MaxInt64.
func (d Domain) cells(c []int) int64 {
	n := int64(1)
	for _, a := range c {
		n = satMul(n, int64(d[a]))
	}
	return n
}

// satMul multiplies non-negative numbers, saturating at math.MaxInt64.
func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// satAdd adds non-negative numbers, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// cliqueKey returns a map key for an attribute set.
func cliqueKey(c []int) string {
	b := make([]byte, 0, 4*len(c))
	for i, a := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(a), 10)
	}
	return string(b)
}

// isSubset reports whether sorted set a is contained in sorted set b.
func isSubset(a, b []int) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
		j++
	}
	return true
}

// intersect returns the intersection of sorted sets a and b.
func intersect(a, b []int) []int {
	out := []int{}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// union returns the union of sorted sets a and b.
func union(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// contains reports whether sorted set s holds x.
func contains(s []int, x int) bool {
	for _, a := range s {
		if a == x {
			return true
		}
		if a > x {
			return false
		}
	}
	return false
}

// without returns sorted set s without x.
func without(s []int, x int) []int {
	out := make([]int, 0, len(s))
	for _, a := range s {
		if a != x {
			out = append(out, a)
		}
	}
	return out
}
