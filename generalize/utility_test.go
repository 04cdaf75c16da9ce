package generalize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// utilityTable is a small table of two quasi-identifiers:
//
//	sex: leaves F (0), M (1); then "*"                           — no numeric values
//	age: leaves 20 (0), 25 (1), 30 (2), 33 (3), 38 (4); then the intervals [20,29] (0)
//	     and [30,39] (1); then "*"                                — values 20, 25, 30, 33, 38
//
// The records (sex, age) are given as leaf codes; leaf 33 may be held by none of them.
func utilityTable(t testing.TB, records [][2]int32) (*Table, [][]float64) {
	t.Helper()
	sex, err := NewHierarchy("sex", [][]string{{"F", Top}, {"M", Top}})
	if err != nil {
		t.Fatal(err)
	}
	age, err := BuildIntervals("age", []string{"20", "25", "30", "33", "38"}, schema.Integer, []float64{10})
	if err != nil {
		t.Fatal(err)
	}
	// The codes the hand computations below rely on.
	for leaf, want := range []string{"[20,29]", "[20,29]", "[30,39]", "[30,39]", "[30,39]"} {
		if got := age.Value(1, age.Code(1, int32(leaf))); got != want {
			t.Fatalf("age leaf %d is under %s, want %s", leaf, got, want)
		}
	}
	if age.Value(1, 0) != "[20,29]" || age.Height() != 3 {
		t.Fatalf("unexpected age hierarchy")
	}
	tab := &Table{Rows: len(records)}
	for i, h := range []*Hierarchy{sex, age} {
		codes := NewCodes(len(records), h.Leaves())
		for r, rec := range records {
			codes.Set(r, rec[i])
		}
		tab.Columns = append(tab.Columns, Column{Name: h.Source(), Hierarchy: h, Codes: codes})
	}
	return tab, [][]float64{nil, {20, 25, 30, 33, 38}}
}

// The eight records of most hand-computed tests. Frequencies: sex F 4, M 4; age 20 → 3,
// 25 → 2, 30 → 2, 33 → 0, 38 → 1. The ages present span 38 − 20 = 18.
var utilityRecords = [][2]int32{
	{0, 0}, // r0 F 20
	{0, 1}, // r1 F 25
	{1, 0}, // r2 M 20
	{1, 2}, // r3 M 30
	{1, 4}, // r4 M 38
	{0, 2}, // r5 F 30
	{0, 0}, // r6 F 20
	{1, 1}, // r7 M 25
}

const utilityTol = 1e-12

func checkMetrics(t *testing.T, got, want Metrics) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"loss", got.Loss, want.Loss},
		{"ncp", got.NCP, want.NCP},
		{"discernibility", got.Discernibility, want.Discernibility},
		{"c_avg", got.CAvg, want.CAvg},
		{"non_uniform_entropy", got.NonUniformEntropy, want.NonUniformEntropy},
	} {
		if math.Abs(f.got-f.want) > utilityTol*max(1, math.Abs(f.want)) {
			t.Errorf("%s = %.15g, want %.15g", f.name, f.got, f.want)
		}
	}
}

func TestUtilityIdentity(t *testing.T) {
	tab, values := utilityTable(t, utilityRecords)
	// Every distinct record its own class, released as its leaves:
	// c0 (F,20): r0 r6; c1 (F,25): r1; c2 (M,20): r2; c3 (M,30): r3; c4 (M,38): r4;
	// c5 (F,30): r5; c6 (M,25): r7.
	class := []int32{0, 1, 2, 3, 4, 5, 0, 6}
	leaves := [][2]int32{{0, 0}, {0, 1}, {1, 0}, {1, 2}, {1, 4}, {0, 2}, {1, 1}}
	nodes := make([][]Cover, len(leaves))
	ranges := make([][]Cover, len(leaves)) // age as the one-value range [v,v]
	for c, l := range leaves {
		nodes[c] = []Cover{{Level: 0, Code: l[0]}, {Level: 0, Code: l[1]}}
		ranges[c] = []Cover{{Level: 0, Code: l[0]}, {Level: -1, Lo: l[1], Hi: l[1]}}
	}
	// Every value covers one leaf: loss 0, NCP 0, and every entropy term is
	// −log2(f/f) = 0. Discernibility 2² + 6·1² = 10; C_AVG (8 records / 7 classes) / k.
	want := Metrics{Discernibility: 10, CAvg: 8.0 / 7.0 / 1}
	for name, covers := range map[string][][]Cover{"nodes": nodes, "ranges": ranges} {
		t.Run(name, func(t *testing.T) {
			got, err := Utility(tab, class, listed(covers), values, 1)
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, got, want)
			if got.NonUniformEntropy != 0 {
				t.Errorf("non-uniform entropy %g, want exactly 0", got.NonUniformEntropy)
			}
		})
	}
}

func TestUtilityFullyGeneralized(t *testing.T) {
	tab, values := utilityTable(t, utilityRecords)
	// Non-uniform entropy when every value covers the whole column (f / N per record):
	//   sex: 4·log2(8/4) + 4·log2(8/4) = 8
	//   age: 3·log2(8/3) + 2·log2(8/2) + 2·log2(8/2) + 1·log2(8/1) = 3·(3 − log2 3) + 11
	//        = 20 − 3·log2 3
	nue := 28 - 3*math.Log2(3)

	t.Run("top", func(t *testing.T) {
		// One class of 8 released as (*, *), k = 2.
		// loss: (2−1)/(2−1) = 1 and (5−1)/(5−1) = 1 for every record → 1.
		// NCP: sex 2/2 = 1; age (38 − 20)/18 = 1 → 1.
		// discernibility 8² = 64; C_AVG (8/1)/2 = 4.
		class := make([]int32, 8)
		covers := [][]Cover{{{Level: 1, Code: 0}, {Level: 2, Code: 0}}}
		got, err := Utility(tab, class, listed(covers), values, 2)
		if err != nil {
			t.Fatal(err)
		}
		checkMetrics(t, got, Metrics{Loss: 1, NCP: 1, Discernibility: 64, CAvg: 4, NonUniformEntropy: nue})
	})
	t.Run("widest range", func(t *testing.T) {
		// age as the range [20,38], which covers every leaf: the same measures.
		class := make([]int32, 8)
		covers := [][]Cover{{{Level: 1, Code: 0}, {Level: -1, Lo: 0, Hi: 4}}}
		got, err := Utility(tab, class, listed(covers), values, 2)
		if err != nil {
			t.Fatal(err)
		}
		checkMetrics(t, got, Metrics{Loss: 1, NCP: 1, Discernibility: 64, CAvg: 4, NonUniformEntropy: nue})
	})
	t.Run("all suppressed", func(t *testing.T) {
		// Every record counts 1 for loss and NCP and covers everything for the entropy;
		// discernibility 8 suppressed × 8 records = 64; nothing released: C_AVG 0.
		class := []int32{-1, -1, -1, -1, -1, -1, -1, -1}
		got, err := Utility(tab, class, ClassCovers{}, values, 2)
		if err != nil {
			t.Fatal(err)
		}
		checkMetrics(t, got, Metrics{Loss: 1, NCP: 1, Discernibility: 64, CAvg: 0, NonUniformEntropy: nue})
	})
}

func TestUtilityMixedRelease(t *testing.T) {
	tab, values := utilityTable(t, utilityRecords)
	// c0 = {r0 F20, r1 F25, r6 F20}: (F, [20,29])
	// c1 = {r3 M30, r4 M38}:         (M, range [30,38] = leaves 2..4)
	// c2 = {r2 M20, r5 F30}:         (*, range [20,30] = leaves 0..2)
	// r7 (M25) suppressed; k = 2.
	class := []int32{0, 0, 2, 1, 1, 2, 0, -1}
	covers := [][]Cover{
		{{Level: 0, Code: 0}, {Level: 1, Code: 0}},
		{{Level: 0, Code: 1}, {Level: -1, Lo: 2, Hi: 4}},
		{{Level: 1, Code: 0}, {Level: -1, Lo: 0, Hi: 2}},
	}
	// loss, per column Σ over records:
	//   sex (span 1): c0 3·0 + c1 2·0 + c2 2·(2−1)/1 + r7 1 = 3
	//   age (span 4): c0 covers 20,25: 3·1/4; c1 covers 30,33,38 (33 is held by no
	//   record but is a leaf of the range): 2·2/4; c2 covers 20,25,30: 2·2/4; r7 1
	//   = 3/4 + 1 + 1 + 1 = 15/4
	//   loss = (3 + 15/4) / (8·2) = 27/64
	loss := 27.0 / 64
	// NCP:
	//   sex (no values): c0 0, c1 0, c2 2·(2/2), r7 1 = 3
	//   age (present spread 18): c0 node covers 20..25: 3·5/18; c1 2·(38−30)/18;
	//   c2 2·(30−20)/18; r7 1 = (15 + 16 + 20)/18 + 1 = 23/6
	//   NCP = (3 + 23/6) / 16 = 41/96
	ncp := 41.0 / 96
	// discernibility 3² + 2² + 2² + 1 suppressed · 8 = 25; C_AVG (7/3)/2 = 7/6.
	// non-uniform entropy, −log2(f(leaf)/F(cover)) per record:
	//   sex: c0 F in F: 0 ×3; c1 M in M: 0 ×2; c2 M and F in * (F = 8): 2·log2(8/4);
	//        r7: log2(8/4) → 3
	//   age: c0 F(20..25) = 3+2 = 5: r0, r6 log2(5/3), r1 log2(5/2)
	//        c1 F(30,33,38) = 2+0+1 = 3: r3 log2(3/2), r4 log2(3/1)
	//        c2 F(20,25,30) = 3+2+2 = 7: r2 log2(7/3), r5 log2(7/2)
	//        r7 suppressed: log2(8/2) = 2
	lg := math.Log2
	nue := 3 + 2*lg(5.0/3) + lg(5.0/2) + lg(3.0/2) + lg(3) + lg(7.0/3) + lg(7.0/2) + 2
	got, err := Utility(tab, class, listed(covers), values, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, got, Metrics{Loss: loss, NCP: ncp, Discernibility: 25, CAvg: 7.0 / 6, NonUniformEntropy: nue})

	// Without age's values the range covers cannot be measured; with the age released
	// as hierarchy nodes instead ([30,39] for c1 and * for c2), age's NCP is nominal:
	//   c0 3·2/5, c1 2·3/5, c2 2·5/5, r7 1 = (6 + 6 + 10)/5 + 1 = 27/5
	//   NCP = (3 + 27/5) / 16 = 21/40
	// and loss: age c0 3·1/4, c1 2·2/4, c2 2·4/4, r7 1 = 3/4 + 1 + 2 + 1 = 19/4,
	//   loss = (3 + 19/4) / 16 = 31/64
	// entropy: c2's age cover * has F = 8: r2 log2(8/3), r5 log2(8/2) instead.
	covers[1][1] = Cover{Level: 1, Code: 1}
	covers[2][1] = Cover{Level: 2, Code: 0}
	nue2 := 3 + 2*lg(5.0/3) + lg(5.0/2) + lg(3.0/2) + lg(3) + lg(8.0/3) + lg(8.0/2) + 2
	got, err = Utility(tab, class, listed(covers), [][]float64{nil, nil}, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, got, Metrics{Loss: 31.0 / 64, NCP: 21.0 / 40, Discernibility: 25, CAvg: 7.0 / 6, NonUniformEntropy: nue2})
}

func TestUtilityNumericNCPEdges(t *testing.T) {
	t.Run("capped", func(t *testing.T) {
		// Records (F,20), (M,25): the ages present span 5, the top node covers 20..38.
		// NCP: sex 2/2 = 1 per record; age min(1, 18/5) = 1 per record → 1, not
		// (2 + 2·3.6)/4.
		tab, values := utilityTable(t, [][2]int32{{0, 0}, {1, 1}})
		got, err := Utility(tab, []int32{0, 0}, listed([][]Cover{{{Level: 1, Code: 0}, {Level: 2, Code: 0}}}), values, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got.NCP != 1 {
			t.Errorf("NCP %g, want 1", got.NCP)
		}
	})
	t.Run("one value present", func(t *testing.T) {
		// Records (F,30), (M,30): no spread, so age's NCP is 0 even at the top:
		// NCP = (sex 2·2/2 + age 0) / (2·2) = 1/2. Loss is still 1. Entropy: sex
		// 2·log2(2/1) = 2; age covers the one present leaf: 0.
		tab, values := utilityTable(t, [][2]int32{{0, 2}, {1, 2}})
		got, err := Utility(tab, []int32{0, 0}, listed([][]Cover{{{Level: 1, Code: 0}, {Level: 2, Code: 0}}}), values, 2)
		if err != nil {
			t.Fatal(err)
		}
		checkMetrics(t, got, Metrics{Loss: 1, NCP: 0.5, Discernibility: 4, CAvg: 1, NonUniformEntropy: 2})
	})
	t.Run("no records", func(t *testing.T) {
		tab, values := utilityTable(t, nil)
		got, err := Utility(tab, nil, ClassCovers{}, values, 3)
		if err != nil {
			t.Fatal(err)
		}
		checkMetrics(t, got, Metrics{})
	})
}

// listed is covers[c][j] (what class c releases for column j) as ClassCovers, equal
// values sharing one dictionary entry.
func listed(covers [][]Cover) ClassCovers {
	if len(covers) == 0 {
		return ClassCovers{}
	}
	q := len(covers[0])
	cc := ClassCovers{Dict: make([][]Cover, q)}
	seen := make([]map[Cover]int32, q)
	for j := range seen {
		seen[j] = map[Cover]int32{}
	}
	for _, row := range covers {
		for j, cv := range row {
			x, ok := seen[j][cv]
			if !ok {
				x = int32(len(cc.Dict[j]))
				cc.Dict[j] = append(cc.Dict[j], cv)
				seen[j][cv] = x
			}
			cc.Index = append(cc.Index, x)
		}
	}
	return cc
}

func TestUtilityErrors(t *testing.T) {
	good := func() (*Table, []int32, [][]Cover, [][]float64) {
		tab, values := utilityTable(t, utilityRecords)
		class := []int32{0, 0, 2, 1, 1, 2, 0, -1}
		covers := [][]Cover{
			{{Level: 0, Code: 0}, {Level: 1, Code: 0}},
			{{Level: 0, Code: 1}, {Level: -1, Lo: 2, Hi: 4}},
			{{Level: 1, Code: 0}, {Level: -1, Lo: 0, Hi: 2}},
		}
		return tab, class, covers, values
	}
	if tab, class, covers, values := good(); true {
		if _, err := Utility(tab, class, listed(covers), values, 2); err != nil {
			t.Fatalf("the unbroken release: %v", err)
		}
	}
	for _, tc := range []struct {
		name   string
		k      int
		mutate func(tab **Table, class *[]int32, covers [][]Cover, values *[][]float64)
		want   string
	}{
		{"no table", 2, func(tab **Table, _ *[]int32, _ [][]Cover, _ *[][]float64) { *tab = nil }, "no table"},
		{"bad table", 2, func(tab **Table, _ *[]int32, _ [][]Cover, _ *[][]float64) { (*tab).Rows = 9 }, "codes for 9 rows"},
		{"no columns", 2, func(tab **Table, _ *[]int32, _ [][]Cover, _ *[][]float64) { (*tab).Columns = nil }, "no quasi-identifiers"},
		{"no hierarchy", 2, func(tab **Table, _ *[]int32, _ [][]Cover, _ *[][]float64) { (*tab).Columns[1].Hierarchy = nil }, "column \"age\" has no hierarchy"},
		{"leaf code too high", 2, func(tab **Table, _ *[]int32, _ [][]Cover, _ *[][]float64) { (*tab).Columns[0].Codes.Set(6, 2) }, "record 6, column \"sex\": leaf code outside the hierarchy's 0..1"},
		{"k zero", 0, nil, "k must be"},
		{"short class", 2, func(_ **Table, class *[]int32, _ [][]Cover, _ *[][]float64) { *class = (*class)[:7] }, "7 class indexes for 8 records"},
		{"class too high", 2, func(_ **Table, class *[]int32, _ [][]Cover, _ *[][]float64) { (*class)[3] = 3 }, "record 3: class 3 outside -1..2"},
		{"class too low", 2, func(_ **Table, class *[]int32, _ [][]Cover, _ *[][]float64) { (*class)[5] = -2 }, "record 5: class -2"},
		{"level too high", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[0][1].Level = 3 }, "level 3 outside"},
		{"code too high", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[0][0].Code = 2 }, "code 2 outside 0..1"},
		{"code negative", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[2][0].Code = -1 }, "code -1 outside"},
		{"range without values", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) {
			covers[0][0] = Cover{Level: -1, Lo: 0, Hi: 1}
		}, "without numeric values"},
		{"range values dropped", 2, func(_ **Table, _ *[]int32, _ [][]Cover, values *[][]float64) { *values = nil }, "column \"age\", released value 1: a range on a column without numeric values"},
		{"range leaf too high", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[1][1].Hi = 5 }, "outside 0..4"},
		{"range leaf negative", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[2][1].Lo = -1 }, "outside 0..4"},
		{"range reversed", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[1][1].Lo, covers[1][1].Hi = 4, 2 }, "above"},
		{"values for too few columns", 2, func(_ **Table, _ *[]int32, _ [][]Cover, values *[][]float64) { *values = (*values)[1:] }, "values for 1 columns"},
		{"values too short", 2, func(_ **Table, _ *[]int32, _ [][]Cover, values *[][]float64) { (*values)[1] = (*values)[1][:4] }, "4 values for 5 leaves"},
		{"value NaN", 2, func(_ **Table, _ *[]int32, _ [][]Cover, values *[][]float64) {
			(*values)[1] = []float64{20, 25, math.NaN(), 33, 38}
		}, "leaf 2 is not finite"},
		{"node does not cover", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[0][1].Code = 1 }, "record 0, column \"age\": the value released by class 0 does not cover"},
		{"leaf does not cover", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[1][0].Code = 0 }, "record 3, column \"sex\""},
		{"range does not cover", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) { covers[1][1].Hi = 3 }, "record 4, column \"age\""},
		// Both columns fail: the first column's error, whichever worker fails first.
		{"two columns do not cover", 2, func(_ **Table, _ *[]int32, covers [][]Cover, _ *[][]float64) {
			covers[1][0].Code, covers[1][1].Hi = 0, 3
		}, "record 3, column \"sex\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, class, covers, values := good()
			if tc.mutate != nil {
				tc.mutate(&tab, &class, covers, &values)
			}
			m, err := Utility(tab, class, listed(covers), values, tc.k)
			if err == nil {
				t.Fatalf("no error (metrics %+v)", m)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
			if m != (Metrics{}) {
				t.Errorf("metrics %+v with the error", m)
			}
			for _, v := range []string{"20", "25", "38", "\"F\"", "\"M\""} {
				if strings.Contains(err.Error(), v) {
					t.Errorf("error %q names a value (%s)", err, v)
				}
			}
		})
	}
	// Dictionaries and indexes that do not fit together.
	for _, tc := range []struct {
		name  string
		shape func(*ClassCovers)
		want  string
	}{
		{"index short", func(cc *ClassCovers) { cc.Index = cc.Index[:5] }, "5 cover indexes, not a multiple of the 2"},
		{"index too high", func(cc *ClassCovers) { cc.Index[4] = 3 }, "class 2, column \"sex\": released value 3 outside 0..2"},
		{"index negative", func(cc *ClassCovers) { cc.Index[1] = -1 }, "class 0, column \"age\": released value -1 outside"},
		{"dictionaries missing", func(cc *ClassCovers) { cc.Dict = cc.Dict[:1] }, "released values of 1 quasi-identifiers, the table has 2"},
		{"no dictionaries", func(cc *ClassCovers) { cc.Dict = nil }, "released values of 0 quasi-identifiers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, class, covers, values := good()
			cc := listed(covers)
			tc.shape(&cc)
			m, err := Utility(tab, class, cc, values, 2)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if m != (Metrics{}) {
				t.Errorf("metrics %+v with the error", m)
			}
		})
	}
}

// TestUtilityLosslessIsExactlyZero: a release whose every value covers a single leaf
// present in the table loses nothing, and measures exactly 0 (not a rounding residue)
// on larger random tables too.
func TestUtilityLosslessIsExactlyZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	trials := 20
	if testing.Short() {
		trials = 4 // the race detector's run: Utility's goroutines, on fewer tables
	}
	for trial := range trials {
		n := 1000 + rng.IntN(20000)
		tab, _, _ := randomTable(rng, n, 1+rng.IntN(4))
		values := randomValues(rng, tab)
		// A range [v,v] covers every leaf of value v: only ties make it lossy.
		unique := make([]map[float64]int, len(values))
		for j, v := range values {
			unique[j] = map[float64]int{}
			for _, f := range v {
				unique[j][f]++
			}
		}
		index := map[string]int32{}
		class := make([]int32, n)
		var covers [][]Cover
		for r := range n {
			cv := make([]Cover, len(tab.Columns))
			for j, col := range tab.Columns {
				x := col.Codes.At(r)
				if values[j] != nil && unique[j][values[j][x]] == 1 && rng.IntN(2) == 0 {
					cv[j] = Cover{Level: -1, Lo: x, Hi: x}
				} else {
					cv[j] = Cover{Level: 0, Code: x}
				}
			}
			key := fmt.Sprint(cv)
			c, ok := index[key]
			if !ok {
				c = int32(len(covers))
				index[key] = c
				covers = append(covers, cv)
			}
			class[r] = c
		}
		m, err := Utility(tab, class, listed(covers), values, 1)
		if err != nil {
			t.Fatal(err)
		}
		if m.Loss != 0 || m.NCP != 0 || m.NonUniformEntropy != 0 {
			t.Fatalf("trial %d: lossless release measures %+v", trial, m)
		}
	}
}

// naiveUtility computes the metrics straight from their definitions, record by record
// and column by column, listing the covered leaves of every released value.
func naiveUtility(tab *Table, class []int32, covers [][]Cover, values [][]float64, k int) Metrics {
	n, q := tab.Rows, len(tab.Columns)
	var m Metrics
	for j, col := range tab.Columns {
		h := col.Hierarchy
		var vals []float64
		if values != nil {
			vals = values[j]
		}
		f := make([]float64, h.Leaves())
		for r := range n {
			f[col.Codes.At(r)]++
		}
		spread := 0.0
		if vals != nil {
			lo, hi := math.Inf(1), math.Inf(-1)
			for x, c := range f {
				if c > 0 {
					lo, hi = min(lo, vals[x]), max(hi, vals[x])
				}
			}
			if n > 0 {
				spread = hi - lo
			}
		}
		for r := range n {
			var covered []int32
			for y := range int32(h.Leaves()) {
				in := class[r] < 0
				if !in {
					cv := covers[class[r]][j]
					if cv.Level >= 0 {
						in = h.Code(int(cv.Level), y) == cv.Code
					} else {
						in = vals[cv.Lo] <= vals[y] && vals[y] <= vals[cv.Hi]
					}
				}
				if in {
					covered = append(covered, y)
				}
			}
			fc := 0.0
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, y := range covered {
				fc += f[y]
				if vals != nil {
					lo, hi = min(lo, vals[y]), max(hi, vals[y])
				}
			}
			m.NonUniformEntropy += -math.Log2(f[col.Codes.At(r)] / fc)
			if class[r] < 0 {
				m.Loss++
				m.NCP++
				continue
			}
			if h.Leaves() > 1 {
				m.Loss += float64(len(covered)-1) / float64(h.Leaves()-1)
			}
			switch {
			case vals != nil:
				if spread > 0 {
					m.NCP += min(1, (hi-lo)/spread)
				}
			case len(covered) > 1:
				m.NCP += float64(len(covered)) / float64(h.Leaves())
			}
		}
	}
	if n > 0 {
		m.Loss /= float64(n * q)
		m.NCP /= float64(n * q)
	}
	sizes := map[int32]float64{}
	supp := 0.0
	for _, c := range class {
		if c < 0 {
			supp++
		} else {
			sizes[c]++
		}
	}
	for _, s := range sizes {
		m.Discernibility += s * s
	}
	m.Discernibility += supp * float64(n)
	if len(sizes) > 0 {
		m.CAvg = (float64(n) - supp) / float64(len(sizes)) / float64(k)
	}
	return m
}

// randomValues gives about half of the columns numeric leaf values: small integers
// (ties between leaves included, in no particular order of the codes) or reals.
func randomValues(rng *rand.Rand, tab *Table) [][]float64 {
	values := make([][]float64, len(tab.Columns))
	for j, col := range tab.Columns {
		switch rng.IntN(3) {
		case 0:
			continue
		case 1:
			values[j] = make([]float64, col.Hierarchy.Leaves())
			for x := range values[j] {
				values[j][x] = float64(rng.IntN(9) - 3)
			}
		default:
			values[j] = make([]float64, col.Hierarchy.Leaves())
			for x := range values[j] {
				values[j][x] = rng.NormFloat64() * 100
			}
		}
	}
	return values
}

// randomRelease releases tab by grouping its records on their codes at a random level
// per column; a column with values is, at random, released as hierarchy nodes or as
// each class's range of values. A random share of the classes is suppressed, and a few
// class indexes are left unused.
func randomRelease(rng *rand.Rand, tab *Table, values [][]float64) ([]int32, [][]Cover) {
	q := len(tab.Columns)
	levels := make([]int, q)
	ranged := make([]bool, q)
	for j, col := range tab.Columns {
		levels[j] = rng.IntN(col.Hierarchy.Height())
		ranged[j] = values[j] != nil && rng.IntN(2) == 0
	}
	index := map[string]int32{}
	class := make([]int32, tab.Rows)
	var covers [][]Cover
	for r := range tab.Rows {
		var key strings.Builder
		for j, col := range tab.Columns {
			fmt.Fprintf(&key, "%d,", col.Hierarchy.Code(levels[j], col.Codes.At(r)))
		}
		c, ok := index[key.String()]
		if !ok {
			if rng.IntN(8) == 0 { // an unused class index
				covers = append(covers, make([]Cover, q))
				for j, col := range tab.Columns {
					covers[len(covers)-1][j] = Cover{Level: int32(col.Hierarchy.Height() - 1)}
				}
			}
			c = int32(len(covers))
			index[key.String()] = c
			cv := make([]Cover, q)
			for j, col := range tab.Columns {
				x := col.Codes.At(r)
				if ranged[j] {
					cv[j] = Cover{Level: -1, Lo: x, Hi: x}
				} else {
					cv[j] = Cover{Level: int32(levels[j]), Code: col.Hierarchy.Code(levels[j], x)}
				}
			}
			covers = append(covers, cv)
		}
		class[r] = c
		for j, col := range tab.Columns {
			if ranged[j] {
				x, cv := col.Codes.At(r), &covers[c][j]
				if values[j][x] < values[j][cv.Lo] {
					cv.Lo = x
				}
				if values[j][x] > values[j][cv.Hi] {
					cv.Hi = x
				}
			}
		}
	}
	supp := make([]bool, len(covers))
	for c := range supp {
		supp[c] = rng.IntN(6) == 0
	}
	for r, c := range class {
		if supp[c] {
			class[r] = -1
		}
	}
	return class, covers
}

// coarsen returns a coarser release: either two released classes merged into one
// released as, per column, the two nodes' lowest common ancestor or the union of the
// two ranges; or one released class suppressed. ok is false when no class is released.
func coarsen(rng *rand.Rand, tab *Table, values [][]float64, class []int32, covers [][]Cover) (nclass []int32, ncovers [][]Cover, ok bool) {
	seen := map[int32]bool{}
	var live []int32
	for _, c := range class {
		if c >= 0 && !seen[c] {
			seen[c] = true
			live = append(live, c)
		}
	}
	if len(live) == 0 {
		return nil, nil, false
	}
	nclass = append([]int32(nil), class...)
	ncovers = make([][]Cover, len(covers))
	for c := range covers {
		ncovers[c] = append([]Cover(nil), covers[c]...)
	}
	a := live[rng.IntN(len(live))]
	if len(live) == 1 || rng.IntN(4) == 0 {
		for r, c := range nclass {
			if c == a {
				nclass[r] = -1
			}
		}
		return nclass, ncovers, true
	}
	b := a
	for b == a {
		b = live[rng.IntN(len(live))]
	}
	for j, col := range tab.Columns {
		h := col.Hierarchy
		ca, cb := covers[a][j], covers[b][j]
		if ca.Level < 0 {
			v := values[j]
			if v[cb.Lo] < v[ca.Lo] {
				ca.Lo = cb.Lo
			}
			if v[cb.Hi] > v[ca.Hi] {
				ca.Hi = cb.Hi
			}
			ncovers[a][j] = ca
			continue
		}
		under := func(cv Cover) int32 { // a leaf under the node
			for x := range int32(h.Leaves()) {
				if h.Code(int(cv.Level), x) == cv.Code {
					return x
				}
			}
			panic("a node without leaves")
		}
		xa, xb := under(ca), under(cb)
		for l := int(max(ca.Level, cb.Level)); l < h.Height(); l++ {
			if h.Code(l, xa) == h.Code(l, xb) {
				ncovers[a][j] = Cover{Level: int32(l), Code: h.Code(l, xa)}
				break
			}
		}
	}
	for r, c := range nclass {
		if c == b {
			nclass[r] = a
		}
	}
	return nclass, ncovers, true
}

func closeMetrics(got, want Metrics) bool {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
	return near(got.Loss, want.Loss) && near(got.NCP, want.NCP) && near(got.Discernibility, want.Discernibility) &&
		near(got.CAvg, want.CAvg) && near(got.NonUniformEntropy, want.NonUniformEntropy)
}

// TestUtilityRandomCoarsening checks, on random tables and releases, every metric
// against the definitions computed record by record, and that coarsening a release
// (merging two classes into their common generalization, or suppressing a class) never
// decreases loss, NCP, discernibility or non-uniform entropy.
func TestUtilityRandomCoarsening(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	for trial := range 150 {
		n := 1 + rng.IntN(200)
		q := 1 + rng.IntN(4)
		tab, _, _ := randomTable(rng, n, q)
		values := randomValues(rng, tab)
		class, covers := randomRelease(rng, tab, values)
		k := 1 + rng.IntN(5)
		prev, err := Utility(tab, class, listed(covers), values, k)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if want := naiveUtility(tab, class, covers, values, k); !closeMetrics(prev, want) {
			t.Fatalf("trial %d: got %+v, by definition %+v", trial, prev, want)
		}
		for step := range 12 {
			var ok bool
			class, covers, ok = coarsen(rng, tab, values, class, covers)
			if !ok {
				break
			}
			m, err := Utility(tab, class, listed(covers), values, k)
			if err != nil {
				t.Fatalf("trial %d step %d: %v", trial, step, err)
			}
			if want := naiveUtility(tab, class, covers, values, k); !closeMetrics(m, want) {
				t.Fatalf("trial %d step %d: got %+v, by definition %+v", trial, step, m, want)
			}
			const eps = 1e-9
			if m.Loss < prev.Loss-eps || m.NCP < prev.NCP-eps || m.Discernibility < prev.Discernibility ||
				m.NonUniformEntropy < prev.NonUniformEntropy-eps*max(1, prev.NonUniformEntropy) {
				t.Fatalf("trial %d step %d: coarsening decreased a metric: %+v → %+v", trial, step, prev, m)
			}
			if m.Loss > 1+eps || m.NCP > 1+eps || m.NonUniformEntropy < 0 {
				t.Fatalf("trial %d step %d: out of range: %+v", trial, step, m)
			}
			prev = m
		}
	}
}

// TestUtilityMatchesSearchMetrics checks that, for the full-domain release the search
// chooses, Utility's loss and discernibility are the search's own values.
func TestUtilityMatchesSearchMetrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 29))
	for trial := range 40 {
		n := 20 + rng.IntN(300)
		q := 1 + rng.IntN(4)
		tab, _, _ := randomTable(rng, n, q)
		k := 1 + rng.IntN(8)
		maxSupp := rng.IntN(n/5 + 1)
		for _, metric := range []schema.Metric{MetricLoss, MetricDiscernibility} {
			opt := Options{K: k, MaxSuppressed: maxSupp, Metric: metric, Workers: 2}
			res, err := Search(context.Background(), tab, opt)
			if errors.Is(err, fault.ErrUnattainable) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			supp, err := Suppressed(tab, res.Levels, opt)
			if err != nil {
				t.Fatal(err)
			}
			index := map[string]int32{}
			class := make([]int32, n)
			var covers [][]Cover
			for r := range n {
				if supp[r] {
					class[r] = -1
					continue
				}
				cv := make([]Cover, q)
				for j, col := range tab.Columns {
					cv[j] = Cover{Level: int32(res.Levels[j]), Code: col.Hierarchy.Code(res.Levels[j], col.Codes.At(r))}
				}
				key := fmt.Sprint(cv)
				c, ok := index[key]
				if !ok {
					c = int32(len(covers))
					index[key] = c
					covers = append(covers, cv)
				}
				class[r] = c
			}
			m, err := Utility(tab, class, listed(covers), nil, k)
			if err != nil {
				t.Fatal(err)
			}
			got := map[schema.Metric]float64{MetricLoss: m.Loss, MetricDiscernibility: m.Discernibility}[metric]
			if math.Abs(got-res.Value) > 1e-12*max(1, res.Value) {
				t.Errorf("trial %d %s: Utility %g, search %g", trial, metric, got, res.Value)
			}
			if m.CAvg != 0 && res.Classes > 0 {
				if want := float64(n-res.Suppressed) / float64(res.Classes) / float64(k); math.Abs(m.CAvg-want) > 1e-12 {
					t.Errorf("trial %d: C_AVG %g, want %g", trial, m.CAvg, want)
				}
			}
		}
	}
}

// BenchmarkUtility measures a release of 10⁶ records × 8 quasi-identifiers in about
// 65 000 classes: four categorical columns (64 leaves, released as nodes) and four
// numeric ones (100 leaves, released as each class's range of values).
func BenchmarkUtility(b *testing.B) {
	const n, q = 1_000_000, 8
	rng := rand.New(rand.NewPCG(1, 2))
	tab := &Table{Rows: n}
	values := make([][]float64, q)
	for j := range q {
		var h *Hierarchy
		var err error
		if j%2 == 0 {
			rows := make([][]string, 64)
			for x := range rows {
				rows[x] = []string{fmt.Sprintf("v%d", x), fmt.Sprintf("a%d", x/4), fmt.Sprintf("b%d", x/16), Top}
			}
			h, err = NewHierarchy(fmt.Sprintf("cat%d", j), rows)
		} else {
			leaves := make([]string, 100)
			values[j] = make([]float64, 100)
			for x := range leaves {
				leaves[x] = fmt.Sprint(99 - x) // codes not in the values' order
				values[j][x] = float64(99 - x)
			}
			h, err = BuildIntervals(fmt.Sprintf("num%d", j), leaves, schema.Integer, []float64{5, 10, 50})
		}
		if err != nil {
			b.Fatal(err)
		}
		codes := NewCodes(n, h.Leaves())
		for r := range n {
			codes.Set(r, int32(rng.IntN(h.Leaves())))
		}
		tab.Columns = append(tab.Columns, Column{Name: h.Source(), Hierarchy: h, Codes: codes})
	}
	index := map[uint64]int32{}
	class := make([]int32, n)
	var covers [][]Cover
	for r := range n {
		var key uint64
		for j, col := range tab.Columns {
			x := col.Codes.At(r)
			if j%2 == 0 {
				key = key*4 + uint64(col.Hierarchy.Code(2, x))
			} else {
				key = key*4 + uint64(values[j][x]/25)
			}
		}
		c, ok := index[key]
		if !ok {
			c = int32(len(covers))
			index[key] = c
			cv := make([]Cover, q)
			for j, col := range tab.Columns {
				x := col.Codes.At(r)
				if j%2 == 0 {
					cv[j] = Cover{Level: 2, Code: col.Hierarchy.Code(2, x)}
				} else {
					cv[j] = Cover{Level: -1, Lo: x, Hi: x}
				}
			}
			covers = append(covers, cv)
		}
		class[r] = c
		for j := 1; j < q; j += 2 {
			x, cv := tab.Columns[j].Codes.At(r), &covers[c][j]
			if values[j][x] < values[j][cv.Lo] {
				cv.Lo = x
			}
			if values[j][x] > values[j][cv.Hi] {
				cv.Hi = x
			}
		}
		if r%1000 == 0 {
			class[r] = -1
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var m Metrics
	for b.Loop() {
		var err error
		if m, err = Utility(tab, class, listed(covers), values, 5); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(covers)), "classes")
	b.ReportMetric(m.NCP, "ncp")
}
