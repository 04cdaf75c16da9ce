package generalize

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"

	"sanitizer/internal/safe"
)

// Cover is what one released quasi-identifier value stands for: a hierarchy node
// (Level ≥ 0, Code), or (Level < 0) a numeric range released as [v(Lo), v(Hi)] whose
// covered leaves are every leaf whose value lies between the values of leaves Lo and Hi.
type Cover struct {
	Level  int32
	Code   int32
	Lo, Hi int32 // leaf codes of the smallest and largest value, for ranges
}

// ClassCovers is what every published class releases, each distinct value held once:
// Dict[j] lists the values released for quasi-identifier j, and class c releases
// Dict[j][Index[c·len(Dict)+j]]. A release with no classes may leave both empty.
type ClassCovers struct {
	Dict  [][]Cover
	Index []int32
}

// Classes is the number of classes.
func (cc ClassCovers) Classes() int {
	if len(cc.Dict) == 0 {
		return 0
	}
	return len(cc.Index) / len(cc.Dict)
}

// At is what class c releases for quasi-identifier j.
func (cc ClassCovers) At(c, j int) Cover { return cc.Dict[j][cc.Index[c*len(cc.Dict)+j]] }

// Metrics are the utility measures of one release, each defined in its doc comment with
// its source. "Records" are all records of the input, suppressed ones included;
// "columns" are the quasi-identifiers; the leaves a released value covers are those
// under its hierarchy node, or for a range every leaf of the column's hierarchy (present
// in the table or not) whose value lies in the range; a suppressed record covers every
// leaf of every column.
type Metrics struct {
	// Loss is the tool's `loss` metric, ARX's "loss" (generalization intensity): per
	// record and quasi-identifier, (covered leaves − 1) / (leaves of the column − 1),
	// 0 when the column has a single leaf; a suppressed record counts 1 for every
	// column; averaged over records × columns. In [0, 1]; for a full-domain release it
	// equals the search's MetricLoss.
	Loss float64 `json:"loss"`
	// NCP is the global certainty penalty, GCP (Ghinita, Karras, Kalnis, Mamoulis 2007,
	// "Fast data anonymization with low information loss"), built on the normalized
	// certainty penalty of Xu, Wang, Pei, Wang, Shi, Fu 2006, "Utility-based
	// anonymization using local recoding". The NCP of a released value is, on a column
	// with numeric values, (max − min of the covered leaves' values) / (max − min of the
	// values of the leaves present in the table), 0 when the latter is 0 and capped at 1
	// (a hierarchy node may cover leaves beyond the values present); on a column without
	// numeric values, 0 when one leaf is covered, else covered leaves / leaves of the
	// column. GCP = Σ over records Σ over columns NCP / (records × columns), a
	// suppressed record counting 1 per column. In [0, 1].
	NCP float64 `json:"ncp"`
	// Discernibility is the discernibility metric (Bayardo & Agrawal 2005, "Data privacy
	// through optimal k-anonymization"): Σ over released classes |class|² +
	// (suppressed records) × (records of the input).
	Discernibility float64 `json:"discernibility"`
	// CAvg is the normalized average equivalence class size (LeFevre, DeWitt,
	// Ramakrishnan 2006, "Mondrian multidimensional k-anonymity"):
	// (released records / released classes) / k, 0 when nothing is released. 1 is the
	// ideal: every class has exactly k records.
	CAvg float64 `json:"c_avg"`
	// NonUniformEntropy is the non-uniform entropy (Gionis & Tassa 2009, "k-Anonymization
	// with minimal loss of information"; as in ARX), in bits: Σ over records Σ over
	// columns −log2(f(record's leaf) / Σ f(covered leaves)), where f(x) is the number of
	// input records (suppressed ones included) whose value is leaf x. The total, not an
	// average; 0 when every released value covers a single leaf present in the table.
	NonUniformEntropy float64 `json:"non_uniform_entropy"`
}

// Utility measures a release of t: class[r] is record r's equivalence class (−1:
// suppressed), covers.At(c, j) what class c releases for quasi-identifier column j,
// values[j] the numeric value of each leaf of column j (nil for a column without
// numeric values), k the release's k.
//
// values may be nil altogether (no column has numeric values); otherwise it has one
// entry per column, and a non-nil entry has one finite value per leaf of the column's
// hierarchy. A class index may be unused (an empty class is not a released class).
// Every released value must cover its record's leaf (a range holds the leaf's value, a
// node is the leaf's ancestor). Inconsistent input — wrong lengths, a class index out of
// range, a cover index outside its dictionary, a cover outside its hierarchy, a range on
// a column without values or with v(Lo) > v(Hi), a value that does not cover its record
// — is an error that names records, classes and columns, never values.
//
// The work is one pass over the records per column (counting leaves and checking
// covers), then per class and column a constant (hierarchy node, from tables
// precomputed per node) or logarithmic (range, by binary search in the column's leaves
// sorted by value) amount; columns are measured in parallel.
func Utility(t *Table, class []int32, covers ClassCovers, values [][]float64, k int) (Metrics, error) {
	if t == nil {
		return Metrics{}, errors.New("utility: no table")
	}
	return utility(t, nil, class, covers, values, k)
}

// UtilityClasses is Utility for the records of the class table ct, given the class
// of the release of each of ct's classes (class[j] for ct's class j, −1: suppressed):
// the same metrics as Utility on the records with the same classes and covers (bit for
// bit; another numbering of the classes may change the last bits of the sums), in work
// proportional to ct's classes. Its errors name ct's classes where Utility's name
// records.
func UtilityClasses(ct *ClassTable, class []int32, covers ClassCovers, values [][]float64, k int) (Metrics, error) {
	if err := ct.check(); err != nil {
		return Metrics{}, fmt.Errorf("utility: %w", err)
	}
	t := &Table{Rows: ct.Len()}
	for i, c := range ct.meta.Columns {
		t.Columns = append(t.Columns, Column{Name: c.Name, Hierarchy: c.Hierarchy, Codes: Codes{i32: ct.cols[i]}})
	}
	return utility(t, ct.counts, class, covers, values, k)
}

// utility is Utility on the rows of t, row r standing for weight[r] records (nil: one
// each).
func utility(t *Table, weight []int32, class []int32, covers ClassCovers, values [][]float64, k int) (Metrics, error) {
	if err := checkUtilityTable(t, k); err != nil {
		return Metrics{}, err
	}
	if len(class) != t.Rows {
		return Metrics{}, fmt.Errorf("utility: %d class indexes for %d records", len(class), t.Rows)
	}
	vals, err := utilityValues(t, values)
	if err != nil {
		return Metrics{}, err
	}
	if err := checkUtilityCovers(t, covers, vals); err != nil {
		return Metrics{}, err
	}
	sizes, supp, n, err := classSizes(class, weight, covers.Classes())
	if err != nil {
		return Metrics{}, err
	}
	per := make([]columnUtility, len(t.Columns))
	// Each column's error (a panic too) is kept, and the first column's reported: the
	// same error whichever worker fails first.
	errs := make([]error, len(t.Columns))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for j := range t.Columns {
		g.Go(func() error {
			u := &utilityColumn{col: t.Columns[j], j: j, vals: vals[j], class: class, weight: weight, covers: covers, sizes: sizes, supp: supp, n: n}
			errs[j] = safe.Call(func() (err error) {
				per[j], err = u.measure()
				return err
			})
			return nil
		})
	}
	_ = g.Wait() // the workers return nil: their errors are in errs
	for _, err := range errs {
		if err != nil {
			return Metrics{}, err
		}
	}
	return utilityMetrics(per, sizes, supp, n, k), nil
}

// checkUtilityTable rejects a table Utility cannot measure, and a k below 1.
func checkUtilityTable(t *Table, k int) error {
	if len(t.Columns) == 0 {
		return errors.New("utility: no quasi-identifiers")
	}
	if t.Rows < 0 || t.Rows > math.MaxInt32 {
		return fmt.Errorf("utility: %d records: at most %d can be counted", t.Rows, math.MaxInt32)
	}
	for _, col := range t.Columns {
		if col.Hierarchy == nil {
			return fmt.Errorf("utility: column %q has no hierarchy", col.Name)
		}
		if col.Codes.Len() != t.Rows {
			return fmt.Errorf("utility: column %q: %d codes for %d rows", col.Name, col.Codes.Len(), t.Rows)
		}
	}
	if k < 1 {
		return fmt.Errorf("utility: k must be at least 1, got %d", k)
	}
	return nil
}

// utilityValues returns Utility's values, checked against t, one entry per column
// (nil: the column has no numeric values).
func utilityValues(t *Table, values [][]float64) ([][]float64, error) {
	q := len(t.Columns)
	if values != nil && len(values) != q {
		return nil, fmt.Errorf("utility: values for %d columns, the table has %d quasi-identifiers", len(values), q)
	}
	vals := make([][]float64, q)
	for j, col := range t.Columns {
		if values == nil || values[j] == nil {
			continue
		}
		v := values[j]
		if len(v) != col.Hierarchy.Leaves() {
			return nil, fmt.Errorf("utility: column %q: %d values for %d leaves", col.Name, len(v), col.Hierarchy.Leaves())
		}
		for x, f := range v {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("utility: column %q: the value of leaf %d is not finite", col.Name, x)
			}
		}
		vals[j] = v
	}
	return vals, nil
}

// checkUtilityCovers rejects covers that do not fit t's columns and their values vals.
func checkUtilityCovers(t *Table, covers ClassCovers, vals [][]float64) error {
	q := len(t.Columns)
	if len(covers.Dict) != q && (len(covers.Dict) != 0 || len(covers.Index) != 0) {
		return fmt.Errorf("utility: released values of %d quasi-identifiers, the table has %d", len(covers.Dict), q)
	}
	if len(covers.Index)%q != 0 {
		return fmt.Errorf("utility: %d cover indexes, not a multiple of the %d quasi-identifiers", len(covers.Index), q)
	}
	for j, dict := range covers.Dict {
		for i, cv := range dict {
			if err := cv.check(t.Columns[j].Hierarchy, vals[j]); err != nil {
				return fmt.Errorf("utility: column %q, released value %d: %w", t.Columns[j].Name, i, err)
			}
		}
	}
	for i, x := range covers.Index {
		if x < 0 || int(x) >= len(covers.Dict[i%q]) {
			return fmt.Errorf("utility: class %d, column %q: released value %d outside 0..%d", i/q, t.Columns[i%q].Name, x, len(covers.Dict[i%q])-1)
		}
	}
	return nil
}

// classSizes returns the records of each of the given number of classes, the records
// suppressed (class −1) and all records, row r standing for weight[r] records (nil:
// one each).
func classSizes(class, weight []int32, classes int) (sizes []int32, supp, n int64, err error) {
	sizes = make([]int32, classes)
	for r, c := range class {
		w := int32(1)
		if weight != nil {
			w = weight[r]
		}
		n += int64(w)
		switch {
		case c == -1:
			supp += int64(w)
		case c < -1 || int(c) >= classes:
			return nil, 0, 0, fmt.Errorf("utility: record %d: class %d outside -1..%d", r, c, classes-1)
		default:
			sizes[c] += w
		}
	}
	if n > math.MaxInt32 {
		return nil, 0, 0, fmt.Errorf("utility: %d records: at most %d can be counted", n, math.MaxInt32)
	}
	return sizes, supp, n, nil
}

// utilityMetrics combines the columns' shares per of the metrics of a release of n
// records, supp of them suppressed, in classes of the given sizes, at the given k.
func utilityMetrics(per []columnUtility, sizes []int32, supp, n int64, k int) Metrics {
	var m Metrics
	for _, u := range per {
		m.Loss += u.loss
		m.NCP += u.ncp
		m.NonUniformEntropy += u.nue
	}
	if q := len(per); n > 0 {
		m.Loss /= float64(n) * float64(q)
		m.NCP /= float64(n) * float64(q)
	}
	var disc, released int64
	for _, s := range sizes {
		if s > 0 {
			disc += int64(s) * int64(s)
			released++
		}
	}
	disc += supp * n
	m.Discernibility = float64(disc)
	if released > 0 {
		m.CAvg = float64(n-supp) / float64(released) / float64(k)
	}
	return m
}

// check reports whether the cover is a node of h, or a range of leaves of a column with
// values vals.
func (cv Cover) check(h *Hierarchy, vals []float64) error {
	if cv.Level >= 0 {
		if int(cv.Level) >= h.Height() {
			return fmt.Errorf("level %d outside the hierarchy's 0..%d", cv.Level, h.Height()-1)
		}
		if cv.Code < 0 || int(cv.Code) >= h.Size(int(cv.Level)) {
			return fmt.Errorf("code %d outside 0..%d at level %d", cv.Code, h.Size(int(cv.Level))-1, cv.Level)
		}
		return nil
	}
	if vals == nil {
		return errors.New("a range on a column without numeric values")
	}
	if cv.Lo < 0 || int(cv.Lo) >= h.Leaves() || cv.Hi < 0 || int(cv.Hi) >= h.Leaves() {
		return fmt.Errorf("range of leaves %d..%d outside 0..%d", cv.Lo, cv.Hi, h.Leaves()-1)
	}
	if vals[cv.Lo] > vals[cv.Hi] {
		return fmt.Errorf("range from leaf %d to leaf %d: the first value is above the second", cv.Lo, cv.Hi)
	}
	return nil
}

// columnUtility is one column's share of the metrics: sums over records of the
// per-record loss and NCP, and the column's non-uniform entropy.
type columnUtility struct {
	loss, ncp, nue float64
}

// utilityColumn measures one column of a release.
type utilityColumn struct {
	col    Column
	j      int
	vals   []float64 // nil: no numeric values
	class  []int32
	weight []int32 // records per row (nil: one)
	covers ClassCovers
	sizes  []int32
	supp   int64
	n      int64

	freq []int64 // freq[x]: records whose value is leaf x
	// nodes[l][code]: what the node covers
	nodes [][]coverStat
	// ranges (built only when a class releases a range): the leaves sorted by value
	// (ties by code), their values, and prefix sums over that order of the frequency and
	// of the number of present leaves; next[i] is the first position ≥ i of a present
	// leaf (len(order) if none).
	order   []int32
	sorted  []float64
	preFreq []int64
	preLive []int64
	next    []int32
}

// coverStat is what a released value covers: the number of leaves, their total
// frequency, the smallest and largest of their values (columns with values), the number
// of them present in the table and, when that is 1, which one.
type coverStat struct {
	leaves  int64
	freq    int64
	lo, hi  float64
	present int64
	only    int32
}

// coverCheck holds, per class, the released value of one column in a compact form (one
// cache line read per record), for the per-record check that it covers the record's leaf.
type coverCheck struct {
	cover  []compactCover
	up     [][]int32
	values []float64
}

// compactCover is a Cover of one column: level −1 for a range, a the node's code or
// the range's Lo, b the range's Hi.
type compactCover struct{ level, a, b int32 }

func (cc *coverCheck) covers(c, x int32) bool {
	cv := cc.cover[c]
	if cv.level >= 0 {
		return cc.up[cv.level][x] == cv.a
	}
	v := cc.values[x]
	return v >= cc.values[cv.a] && v <= cc.values[cv.b]
}

// Outcomes of scanCodes.
const (
	scanOK = iota
	scanBadCode
	scanNotCovered
)

// scanCodes counts the leaves of codes into freq (weight[r] records for row r; nil:
// one) and returns the first row whose leaf code is outside freq or whose class's
// cover does not hold its leaf.
func scanCodes[T uint8 | uint16 | int32](codes []T, class, weight []int32, freq []int64, cc *coverCheck) (int, int) {
	class = class[:len(codes)]
	for r, x := range codes {
		if x < 0 || int(x) >= len(freq) {
			return r, scanBadCode
		}
		if weight == nil {
			freq[x]++
		} else {
			freq[x] += int64(weight[r])
		}
		if c := class[r]; c >= 0 && !cc.covers(c, int32(x)) {
			return r, scanNotCovered
		}
	}
	return -1, scanOK
}

// measure returns the column's share of the metrics, after checking that every
// record's code is a leaf of the hierarchy that its class's released value covers.
func (u *utilityColumn) measure() (columnUtility, error) {
	cc, hasRange := u.coverCheck()
	if err := u.scan(&cc); err != nil {
		return columnUtility{}, err
	}
	u.nodeStats()
	if hasRange {
		u.rangeIndex()
	}
	return u.share(), nil
}

// share is the column's share of the metrics, once scan and nodeStats (and, when a
// class releases a range, rangeIndex) have indexed it.
func (u *utilityColumn) share() columnUtility {
	h := u.col.Hierarchy
	leaves := h.Leaves()
	spread := u.spread()
	// Non-uniform entropy: a record of leaf x in a class whose cover has frequency F
	// costs log2 F − log2 f(x). Summed per class, Σ |c| log2 F(c) over the classes minus
	// Σ f(x) log2 f(x) over the leaves. A cover with a single present leaf x costs its
	// records exactly 0: they are left out of both sums (single[x] counts them), so that
	// a release without loss measures exactly 0, not a rounding residue.
	single := make([]int64, leaves)
	var lossSum, ncpCount int64 // Σ |c|·(covered − 1); Σ |c|·covered (nominal, > 1 leaf)
	var ncpSum, entropy float64
	add := func(s coverStat, size int64) {
		if s.present == 1 {
			single[s.only] += size
		} else {
			entropy += float64(size) * math.Log2(float64(s.freq))
		}
	}
	for c, size := range u.sizes {
		if size == 0 {
			continue
		}
		s := u.stat(u.covers.At(c, u.j))
		sz := int64(size)
		lossSum += sz * (s.leaves - 1)
		switch {
		case u.vals != nil:
			if spread > 0 {
				ncpSum += float64(sz) * min(1, (s.hi-s.lo)/spread)
			}
		case s.leaves > 1:
			ncpCount += sz * s.leaves
		}
		add(s, sz)
	}
	if u.supp > 0 {
		add(u.nodes[h.Height()-1][0], u.supp)
	}
	for x, f := range u.freq {
		if f > single[x] {
			entropy -= float64(f-single[x]) * math.Log2(float64(f))
		}
	}
	var out columnUtility
	out.loss = float64(u.supp)
	if leaves > 1 {
		out.loss += float64(lossSum) / float64(leaves-1)
	}
	out.ncp = float64(u.supp) + ncpSum + float64(ncpCount)/float64(leaves)
	out.nue = max(0, entropy)
	return out
}

// coverCheck returns every class's released value of the column in compact form,
// and whether one of them is a range.
func (u *utilityColumn) coverCheck() (coverCheck, bool) {
	cc := coverCheck{cover: make([]compactCover, len(u.sizes)), up: u.col.Hierarchy.up, values: u.vals}
	hasRange := false
	for c := range cc.cover {
		cover := u.covers.At(c, u.j)
		if cover.Level >= 0 {
			cc.cover[c] = compactCover{level: cover.Level, a: cover.Code}
		} else {
			cc.cover[c] = compactCover{level: -1, a: cover.Lo, b: cover.Hi}
			hasRange = true
		}
	}
	return cc, hasRange
}

// scan counts the records of every leaf into u.freq, and rejects the first record
// whose code is not a leaf or whose class's released value (cc) does not cover it.
func (u *utilityColumn) scan(cc *coverCheck) error {
	leaves := u.col.Hierarchy.Leaves()
	u.freq = make([]int64, leaves)
	codes := u.col.Codes
	var bad, why int
	switch {
	case codes.u8 != nil:
		bad, why = scanCodes(codes.u8, u.class, u.weight, u.freq, cc)
	case codes.u16 != nil:
		bad, why = scanCodes(codes.u16, u.class, u.weight, u.freq, cc)
	default:
		bad, why = scanCodes(codes.i32, u.class, u.weight, u.freq, cc)
	}
	switch why {
	case scanBadCode:
		return fmt.Errorf("utility: record %d, column %q: leaf code outside the hierarchy's 0..%d", bad, u.col.Name, leaves-1)
	case scanNotCovered:
		return fmt.Errorf("utility: record %d, column %q: the value released by class %d does not cover the record's value", bad, u.col.Name, u.class[bad])
	}
	return nil
}

// spread is the spread of the column's values present in the table, NCP's
// denominator (0: no values, or a single one).
func (u *utilityColumn) spread() float64 {
	if u.vals == nil {
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for x, f := range u.freq {
		if f > 0 {
			lo, hi = min(lo, u.vals[x]), max(hi, u.vals[x])
		}
	}
	if hi > lo {
		return hi - lo
	}
	return 0
}

// nodeStats fills u.nodes from the hierarchy and the leaves' frequencies.
func (u *utilityColumn) nodeStats() {
	h := u.col.Hierarchy
	u.nodes = make([][]coverStat, h.Height())
	for l := range u.nodes {
		ns := make([]coverStat, h.Size(l))
		for code := range ns {
			ns[code] = coverStat{lo: math.Inf(1), hi: math.Inf(-1), only: -1}
		}
		for x := range int32(h.Leaves()) {
			s := &ns[h.up[l][x]]
			s.leaves++
			s.freq += u.freq[x]
			if u.freq[x] > 0 {
				s.present++
				s.only = x
			}
			if u.vals != nil {
				s.lo, s.hi = min(s.lo, u.vals[x]), max(s.hi, u.vals[x])
			}
		}
		u.nodes[l] = ns
	}
}

// rangeIndex sorts the leaves by value and builds the prefix sums ranges are measured by.
func (u *utilityColumn) rangeIndex() {
	leaves := len(u.vals)
	u.order = make([]int32, leaves)
	for x := range u.order {
		u.order[x] = int32(x)
	}
	slices.SortStableFunc(u.order, func(a, b int32) int {
		switch va, vb := u.vals[a], u.vals[b]; {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		return 0
	})
	u.sorted = make([]float64, leaves)
	u.preFreq = make([]int64, leaves+1)
	u.preLive = make([]int64, leaves+1)
	for i, x := range u.order {
		u.sorted[i] = u.vals[x]
		u.preFreq[i+1] = u.preFreq[i] + u.freq[x]
		u.preLive[i+1] = u.preLive[i]
		if u.freq[x] > 0 {
			u.preLive[i+1]++
		}
	}
	u.next = make([]int32, leaves+1)
	u.next[leaves] = int32(leaves)
	for i := leaves - 1; i >= 0; i-- {
		u.next[i] = u.next[i+1]
		if u.freq[u.order[i]] > 0 {
			u.next[i] = int32(i)
		}
	}
}

// stat returns what a (checked) cover of the column covers.
func (u *utilityColumn) stat(cv Cover) coverStat {
	if cv.Level >= 0 {
		return u.nodes[cv.Level][cv.Code]
	}
	lo, hi := u.vals[cv.Lo], u.vals[cv.Hi]
	a := sort.SearchFloat64s(u.sorted, lo)                                                // first value ≥ lo
	b := a + sort.Search(len(u.sorted)-a, func(i int) bool { return u.sorted[a+i] > hi }) // first value > hi
	s := coverStat{
		leaves:  int64(b - a),
		freq:    u.preFreq[b] - u.preFreq[a],
		lo:      lo,
		hi:      hi,
		present: u.preLive[b] - u.preLive[a],
		only:    -1,
	}
	if s.present == 1 {
		s.only = u.order[u.next[a]]
	}
	return s
}
