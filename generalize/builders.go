package generalize

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"sanitizer/fault"
	"sanitizer/schema"
)

// ValueError reports a data value a builder cannot generalize; Index is the value's
// index in the slice given to the builder. Its message never contains the value.
type ValueError struct {
	Index int
	Msg   string
}

// Error names the value by its index and says what is wrong with it.
func (e *ValueError) Error() string { return fmt.Sprintf("value at index %d: %s", e.Index, e.Msg) }

// valueError returns a *ValueError for values[i], wrapped so that it also matches
// fault.ErrBadInput.
func valueError(source string, i int, format string, a ...any) error {
	return fault.BadInput("%s: %w", source, &ValueError{Index: i, Msg: fmt.Sprintf(format, a...)})
}

// build makes a hierarchy of the given height (leaf and "*" included) whose row i is
// values[i] followed by the levels that fill writes into row[1:height-1].
func build(source string, values []string, height int, fill func(i int, v string, row []string) error) (*Hierarchy, error) {
	if len(values) == 0 {
		return nil, fault.BadInput("%s: no values to build a hierarchy from", source)
	}
	seen := make(map[string]int, len(values))
	rows := make([][]string, len(values))
	for i, v := range values {
		if j, dup := seen[v]; dup {
			return nil, valueError(source, i, "duplicate of the value at index %d", j)
		}
		seen[v] = i
		row := make([]string, height)
		row[0] = v
		row[height-1] = Top
		if err := fill(i, v, row); err != nil {
			return nil, err
		}
		rows[i] = row
	}
	h, err := NewHierarchy(source, rows)
	if err != nil {
		var re *RowError
		if errors.As(err, &re) {
			return nil, fault.BadInput("%s: cannot build a consistent hierarchy (value at index %d: %s); are the levels nested?", source, re.Row, re.Msg)
		}
		return nil, fault.BadInput("%s: %w", source, err)
	}
	return h, nil
}

// BuildIntervals builds an interval hierarchy: the leaves are values (in the given
// order, leaf code i = values[i]; values must be distinct), level j (1..len(widths)) is
// the interval of width widths[j-1] that holds the value, then the top "*".
//
// typ is schema.Integer (values parse as base-10 integers, level j is the closed range
// "[lo,hi]" with lo = floor(v/w)*w, hi = lo+w-1) or schema.Float (values parse as
// float64, level j is the half-open "[lo,hi)" with lo = floor(v/w)*w, hi = lo+w).
// Widths must be positive (whole numbers for integers), each a multiple of the one
// before, so that the levels nest. Float bounds are written as exact decimals of the
// widths (0.1 → "[0.3,0.4)"), and a value v lies in "[lo,hi)" when
// ParseFloat(lo) ≤ v < ParseFloat(hi).
func BuildIntervals(source string, values []string, typ schema.Type, widths []float64) (*Hierarchy, error) {
	switch typ {
	case schema.Integer:
		return buildIntIntervals(source, values, widths)
	case schema.Float:
		return buildFloatIntervals(source, values, widths)
	default:
		return nil, fault.BadInput("%s: interval hierarchies need a column of type %s or %s, not %q", source, schema.Integer, schema.Float, typ)
	}
}

func buildIntIntervals(source string, values []string, widths []float64) (*Hierarchy, error) {
	iw := make([]int64, len(widths))
	for j, w := range widths {
		if math.IsNaN(w) || w < 1 || w >= 1<<62 || w != math.Trunc(w) {
			return nil, fault.BadInput("%s: interval width %d (%v) must be a whole number ≥ 1 for an integer column", source, j+1, w)
		}
		iw[j] = int64(w)
		if j > 0 && iw[j]%iw[j-1] != 0 {
			return nil, fault.BadInput("%s: interval widths must nest: width %d (%d) is not a multiple of width %d (%d)", source, j+1, iw[j], j, iw[j-1])
		}
	}
	return build(source, values, len(widths)+2, func(i int, s string, row []string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return valueError(source, i, "integer outside the signed 64-bit range that interval hierarchies cover (−2⁶³ to 2⁶³−1)")
			}
			return valueError(source, i, "not a base-10 integer")
		}
		for j, w := range iw {
			row[j+1] = intInterval(v, w)
		}
		return nil
	})
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// intInterval is "[lo,hi]" with lo = ⌊v/w⌋·w and hi = lo+w-1, for w ≥ 1.
func intInterval(v, w int64) string {
	q := floorDiv(v, w)
	// lo and hi lie within w of v: compute them in 64 bits unless that could overflow.
	safe := (v >= 0 && uint64(math.MaxInt64-v) >= 2*uint64(w)) ||
		(v < 0 && uint64(v-math.MinInt64) >= 2*uint64(w))
	if safe {
		lo := q * w
		return "[" + strconv.FormatInt(lo, 10) + "," + strconv.FormatInt(lo+w-1, 10) + "]"
	}
	bw := big.NewInt(w)
	lo := new(big.Int).Mul(big.NewInt(q), bw)
	hi := new(big.Int).Add(lo, bw)
	hi.Sub(hi, big.NewInt(1))
	return "[" + lo.String() + "," + hi.String() + "]"
}

// decimalWidth is an interval width as the exact decimal it is written as.
func decimalWidth(w float64) (*big.Rat, int) {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(w, 'g', -1, 64))
	// digits after the point: from the shortest form d.ddde±x
	e := strconv.FormatFloat(w, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	frac := 0
	if _, f, ok := strings.Cut(mant, "."); ok {
		frac = len(f)
	}
	return r, max(0, frac-x)
}

func buildFloatIntervals(source string, values []string, widths []float64) (*Hierarchy, error) {
	var (
		w0     *big.Rat   // finest width, exact decimal
		digits int        // decimals of w0 (every width is a multiple of it)
		ratio  []*big.Int // ratio[j] = widths[j] / widths[0], a whole number
	)
	for j, w := range widths {
		if math.IsNaN(w) || math.IsInf(w, 0) || w <= 0 {
			return nil, fault.BadInput("%s: interval width %d (%v) must be a positive number", source, j+1, w)
		}
		r, d := decimalWidth(w)
		if j == 0 {
			w0, digits = r, d
			ratio = append(ratio, big.NewInt(1))
			continue
		}
		prev, _ := decimalWidth(widths[j-1])
		if q := new(big.Rat).Quo(r, prev); !q.IsInt() {
			return nil, fault.BadInput("%s: interval widths must nest: width %d (%v) is not a multiple of width %d (%v)", source, j+1, w, j, widths[j-1])
		}
		ratio = append(ratio, new(big.Rat).Quo(r, w0).Num())
	}
	return build(source, values, len(widths)+2, func(i int, s string, row []string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return valueError(source, i, "not a finite number")
		}
		if len(widths) == 0 {
			return nil
		}
		k, ok := floatCell(v, w0)
		if !ok {
			return valueError(source, i, "the interval width %v is below the precision of the value", widths[0])
		}
		for j, r := range ratio {
			// the cell of width widths[j] is the union of ratio[j] cells of width w0
			kj := new(big.Int).Div(k, r) // Euclidean: ⌊k/r⌋ since r > 0
			lo := new(big.Int).Mul(kj, r)
			hi := new(big.Int).Add(lo, r)
			row[j+1] = "[" + decimal(lo, w0, digits) + "," + decimal(hi, w0, digits) + ")"
		}
		return nil
	})
}

// floatCell returns k such that the float64 boundaries of the cell k·w ≤ v < (k+1)·w
// hold, a boundary n·w being the float64 nearest the exact decimal n·w (what parsing
// the written bound gives).
func floatCell(v float64, w *big.Rat) (*big.Int, bool) {
	x := new(big.Rat).SetFloat64(v)
	x.Quo(x, w)
	k := new(big.Int).Div(x.Num(), x.Denom()) // ⌊v/w⌋ exactly; then bound(k) ≤ v
	next := new(big.Int)
	for range 4 {
		next.Add(k, big.NewInt(1))
		if bound(next, w) > v {
			return k, true
		}
		// (k+1)·w > v exactly but rounds to v: v is that boundary as a float64
		k.Set(next)
	}
	return nil, false
}

// bound is the float64 nearest n·w.
func bound(n *big.Int, w *big.Rat) float64 {
	x := new(big.Rat).SetInt(n)
	f, _ := x.Mul(x, w).Float64()
	return f
}

// decimal writes n·w exactly with at most digits decimals, without trailing zeros.
func decimal(n *big.Int, w *big.Rat, digits int) string {
	x := new(big.Rat).SetInt(n)
	s := x.Mul(x, w).FloatString(digits)
	if digits > 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// BuildMask builds a masking hierarchy: level j (1..m.Max) replaces j characters
// from the right (from the left if !m.FromRight) with '*' (all of them if the value
// is shorter), then the top "*". Characters are runes; bytes that are not valid UTF-8
// count as one character each.
func BuildMask(source string, values []string, m schema.Mask) (*Hierarchy, error) {
	if m.Max < 0 {
		return nil, fault.BadInput("%s: mask max must not be negative (%d)", source, m.Max)
	}
	return build(source, values, m.Max+2, func(_ int, v string, row []string) error {
		for j := 1; j <= m.Max; j++ {
			row[j] = mask(v, j, m.FromRight)
		}
		return nil
	})
}

// mask replaces j characters of v with '*', from the right or the left.
func mask(v string, j int, fromRight bool) string {
	n := 0
	offsets := make([]int, 0, len(v)+1) // byte offset of every rune, then len(v)
	for i := range v {
		offsets = append(offsets, i)
		n++
	}
	offsets = append(offsets, len(v))
	if j >= n {
		return strings.Repeat("*", n)
	}
	if fromRight {
		return v[:offsets[n-j]] + strings.Repeat("*", j)
	}
	return strings.Repeat("*", j) + v[offsets[j]:]
}

// BuildDate builds a date hierarchy: values are ISO dates YYYY-MM-DD; the levels are
// taken from month ("2023-04"), quarter ("2023-Q2"), year ("2023"),
// decade ("[2020,2029]"), in the given order (finest first), then "*".
func BuildDate(source string, values []string, levels []schema.DateUnit) (*Hierarchy, error) {
	prev := 0
	for j, l := range levels {
		rank := slices.Index(schema.DateUnits, l) + 1 // finest first
		if rank == 0 {
			return nil, fault.BadInput("%s: unknown date level %q (want month, quarter, year or decade)", source, l)
		}
		if rank <= prev {
			return nil, fault.BadInput("%s: date levels must go from finest to coarsest without repeats: %q cannot follow %q", source, l, levels[j-1])
		}
		prev = rank
	}
	return build(source, values, len(levels)+2, func(i int, s string, row []string) error {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil || len(s) != len(time.DateOnly) {
			return valueError(source, i, "not an ISO date (YYYY-MM-DD)")
		}
		y, mo := t.Year(), int(t.Month())
		for j, l := range levels {
			switch l {
			case schema.DateMonth:
				row[j+1] = fmt.Sprintf("%04d-%02d", y, mo)
			case schema.DateQuarter:
				row[j+1] = fmt.Sprintf("%04d-Q%d", y, (mo-1)/3+1)
			case schema.DateYear:
				row[j+1] = fmt.Sprintf("%04d", y)
			case schema.DateDecade:
				lo := y - y%10
				row[j+1] = fmt.Sprintf("[%d,%d]", lo, lo+9)
			default:
				return fault.Internalf("%s: date level %q", source, l)
			}
		}
		return nil
	})
}
