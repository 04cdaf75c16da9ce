package verify

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"sanitizer/risk"
	"sanitizer/schema"
)

// handPayout is the publisher's expected payout per record written out from Wan et
// al.'s formula, not through package risk: B·(1 − IL), less L/n when the adversary's
// gain G/n exceeds its cost C.
func handPayout(b, l, g, c, il float64, n int64) float64 {
	p := b * (1 - il)
	if g > c*float64(n) {
		p -= l / float64(n)
	}
	return p
}

// handLoss is the entropy-based information loss Σ ln under / Σ ln leaves, written out.
func handLoss(under, leaves []float64) float64 {
	var num, den float64
	for i := range under {
		num += math.Log(under[i])
		den += math.Log(leaves[i])
	}
	return num / den
}

func game(b, l, g, c float64) risk.Game {
	return risk.CostBenefit{Benefit: b, Loss: l, Gain: g, Cost: c}.Game()
}

// profitCases is TestCounterProfitability's releases: of the hierarchy file and the
// intervals, of the mask (with values left out), and of a level-0 class (IL 0), each
// under the given game.
func profitCases(t *testing.T) (fileCase, maskCase func(risk.Game, ...string) utilityCase, boundary func(risk.Game) utilityCase) {
	t.Helper()
	dept, err := HierarchyDomain(writeHierarchy(t, "A;X;*\nB;X;*\nC;Y;*\nD;Y;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	fileCase = func(g risk.Game, _ ...string) utilityCase {
		return utilityCase{
			spec: Spec{K: 2, InputRows: 6, Columns: []string{"dept", "age"}, Quasi: []string{"dept", "age"},
				Utility: []Quasi{
					{Column: "dept", Domain: dept, Type: schema.String},
					{Column: "age", Domain: IntervalLevels(schema.Integer, []float64{10}), Type: schema.Integer},
				},
				Profitability: &Profitability{Game: g}},
			released: [][2][]string{
				{{"X", "[20,29]"}, {"A", "21"}}, {{"X", "[20,29]"}, {"B", "22"}}, {{"X", "[20,29]"}, {"A", "25"}},
				{{"Y", "[30,39]"}, {"C", "31"}}, {{"Y", "[30,39]"}, {"C", "33"}}, {{"Y", "[30,39]"}, {"D", "37"}},
			},
		}
	}
	mask, err := MaskDomain(true, 2)
	if err != nil {
		t.Fatal(err)
	}
	maskCase = func(g risk.Game, left ...string) utilityCase {
		uc := utilityCase{
			spec: Spec{K: 1, InputRows: 5 + len(left), MaxSuppressed: len(left), Columns: []string{"zip"}, Quasi: []string{"zip"},
				Utility:       []Quasi{{Column: "zip", Domain: mask, Type: schema.String}},
				Profitability: &Profitability{Game: g}},
			released: [][2][]string{
				{{"12**"}, {"1234"}}, {{"12**"}, {"1235"}}, {{"12**"}, {"1234"}}, {{"12**"}, {"1299"}}, {{"13**"}, {"1300"}},
			},
		}
		for _, v := range left {
			uc.suppressed = append(uc.suppressed, []string{v})
		}
		return uc
	}
	one, err := HierarchyDomain(writeHierarchy(t, "A;*\nB;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	boundary = func(g risk.Game) utilityCase {
		return utilityCase{
			spec: Spec{K: 1, InputRows: 2, Columns: []string{"g"}, Quasi: []string{"g"},
				Utility: []Quasi{{Column: "g", Domain: one, Type: schema.String}}, Profitability: &Profitability{Game: g}},
			released: [][2][]string{{{"A"}, {"A"}}, {{"A"}, {"A"}}},
		}
	}
	return fileCase, maskCase, boundary
}

// TestCounterProfitability: the Counter refuses a release whose class leaves the
// publisher no positive payout under the prosecutor's profitability, and measures the
// least payout of one that passes.
//
// File + intervals: dept (A,B→X; C,D→Y; 4 leaves) and age (integer intervals of 10;
// leaves the input's 6 distinct ages 21 22 25 31 33 37). Released (X,[20,29]) ×3 and
// (Y,[30,39]) ×3: each value covers 2 of 4 and 3 of 6 leaves, IL = ln 6 / ln 24 ≈
// 0.5638; B = 10, G = 100, C = 10 (attacked below 10 records): payout 10·(1 − IL) −
// L/3 ≈ 4.362 − L/3: L = 3 → 3.362 > 0; L = 30 → −5.638.
//
// Mask: zip by a mask from the right, 2 levels; input 1234 1235 1234 1299 1300 (4
// distinct). Released at level 2: "12**" ×4 covers 3 leaves (IL ln 3 / ln 4 ≈ 0.7925),
// "13**" ×1 covers 1 (IL 0). Payouts 2.075 − L/4 and 10 − L: L = 8 → 0.075 and 2
// (pass); L = 9 → −0.175 (the larger class fails) and 1. With a fifth input value 9999
// left out, the leaves are 5: IL ln 3 / ln 5 ≈ 0.6826, payout 3.174 − 9/4 = 0.924.
//
// Boundary: level 0 (IL 0), B = 1, L = 2, two records: 1 − 2/2 = 0, not above 0.
//
// (The releases: profitCases.)
func TestCounterProfitability(t *testing.T) {
	fileCase, maskCase, boundary := profitCases(t)
	ilFile := handLoss([]float64{2, 3}, []float64{4, 6})
	ilMask := handLoss([]float64{3}, []float64{4})
	for _, tc := range []struct {
		name  string
		uc    utilityCase
		least float64 // the least payout, when it passes
		bad   string  // a part of the violation; "" for none
	}{
		{"file: the classes pay", fileCase(game(10, 3, 100, 10)), handPayout(10, 3, 100, 10, ilFile, 3), ""},
		{"file: a class attacked at a loss", fileCase(game(10, 30, 100, 10)), 0, "class of 3 records leaves the publisher an expected payout of -5.63"},
		{"file: no attack when it costs more than it gains", fileCase(game(10, 30, 20, 10)), handPayout(10, 30, 20, 10, ilFile, 3), ""},
		{"mask: both classes pay", maskCase(game(10, 8, 100, 10)), handPayout(10, 8, 100, 10, ilMask, 4), ""},
		{"mask: the larger class fails by its loss", maskCase(game(10, 9, 100, 10)), 0, "class of 4 records leaves the publisher an expected payout of -0.17"},
		{"mask: a value left out is a leaf too", maskCase(game(10, 9, 100, 10), "9999"), handPayout(10, 9, 100, 10, handLoss([]float64{3}, []float64{5}), 4), ""},
		{"payout exactly 0 fails", boundary(game(1, 2, 100, 10)), 0, "class of 2 records leaves the publisher an expected payout of 0 per record"},
		{"payout just above 0", boundary(game(1, 1.5, 100, 10)), handPayout(1, 1.5, 100, 10, 0, 2), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bad == "" && !(tc.least > 0) {
				t.Fatalf("the case's hand payout %v is not above 0", tc.least)
			}
			m, err := tc.uc.measure(t)
			var v *Violation
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("a release that pays: %v", err)
			case tc.bad == "" && (!m.Payout || !near(m.LeastPayout, tc.least)):
				t.Fatalf("least payout %v (measured %v), want %v", m.LeastPayout, m.Payout, tc.least)
			case tc.bad != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tc.bad)):
				t.Fatalf("got %v, want a violation saying %q", err, tc.bad)
			case tc.bad != "" && (strings.Contains(err.Error(), "12**") || strings.Contains(err.Error(), "X")):
				t.Fatalf("the violation names a value: %v", err)
			}
		})
	}
}

// TestProfitabilitySpec: profitability without the utility domains, or with a privacy
// unit, is refused; so is the journalist's form without a population, and over a
// research subset with a built hierarchy without the population's leaves.
func TestProfitabilitySpec(t *testing.T) {
	p := &Profitability{Game: game(10, 3, 100, 10)}
	noUtil := missingSpec(t)
	noUtil.Utility, noUtil.Profitability = nil, p
	if _, err := NewCounter(noUtil, noUtil.Columns); err == nil || !strings.Contains(err.Error(), "Spec.Utility") {
		t.Errorf("without utility: %v", err)
	}
	unit := missingSpec(t)
	unit.Unit, unit.Profitability = "id", p
	if _, err := NewCounter(unit, unit.Columns); err == nil || !strings.Contains(err.Error(), "profitability") {
		t.Errorf("with a privacy unit: %v", err)
	}
	rel := &Classes{count: map[string]int64{}}
	if _, err := ExpectedSuppression(unit, []int{1, 1}, rel, &records{}); err == nil || !strings.Contains(err.Error(), "profitability") {
		t.Errorf("expected suppression with a privacy unit: %v", err)
	}
	bad := missingSpec(t)
	bad.Profitability = &Profitability{Game: game(-1, 3, 100, 10)}
	if _, err := NewCounter(bad, bad.Columns); err == nil || !strings.Contains(err.Error(), "benefit") {
		t.Errorf("a negative benefit: %v", err)
	}
	journalist := missingSpec(t)
	journalist.Profitability = &Profitability{Game: p.Game, Journalist: true}
	if _, err := ExpectedSuppression(journalist, []int{1, 1}, rel, &records{}); err == nil || !strings.Contains(err.Error(), "population") {
		t.Errorf("the journalist without a population: %v", err)
	}
	journalist.Population = &PopulationCheck{Counts: func([]int) (map[string]int64, error) { return nil, nil }}
	if _, err := ExpectedSuppression(journalist, []int{1, 1}, rel, &records{}); err == nil || !strings.Contains(err.Error(), "Population.Leaves") {
		t.Errorf("a built hierarchy over a subset without the population's leaves: %v", err)
	}
	if _, err := CheckPopulation(Population{Profitability: &p.Game}, rel, nil); err == nil || !strings.Contains(err.Error(), "Population.Loss") {
		t.Errorf("CheckPopulation without the loss: %v", err)
	}
}

// TestExpectedSuppressionProfitability: at levels (1, 1) of missingSpec with k = 1,
// the input's classes (X,[20,29]) ×3, (Y,[30,39]) ×3 and (X,[40,49]) ×1; dept's values
// cover 2 of 4 leaves, age's 3, 3 and 1 of the input's 7 distinct ages. IL ln 6 / ln 28
// ≈ 0.5377 for the first two, ln 2 / ln 28 ≈ 0.2080 for the third. B = 10, G = 100,
// C = 10: payouts 4.623 − L/3 and 7.920 − L. L = 6: 2.623, 1.920, all pass; L = 9:
// 1.623, −1.08, the single record fails; L = 15: all fail.
func TestExpectedSuppressionProfitability(t *testing.T) {
	ilPair := handLoss([]float64{2, 3}, []float64{4, 7})
	ilOne := handLoss([]float64{2, 1}, []float64{4, 7})
	all := []int{0, 1, 2, 3, 4, 5, 6}
	for _, tc := range []struct {
		name      string
		l, g      float64
		release   []int
		passes    [3]bool // the hand payouts' verdicts: the two classes of 3, the class of 1
		required  int
		violation string
	}{
		{"all pay: all released", 6, 100, all, [3]bool{true, true, true}, 0, ""},
		{"all pay: a paying class left out", 6, 100, all[:6], [3]bool{true, true, true}, 0, "1 of the 1 input records of a class that meets the models are missing"},
		{"the single record fails: left out", 9, 100, all[:6], [3]bool{true, true, false}, 1, ""},
		{"the single record fails: published", 9, 100, all, [3]bool{true, true, false}, 0, "publishes 1 records of a class that has 1 records, which leave the publisher an expected payout of -1.08"},
		{"the single record fails: a paying class left out too", 9, 100, all[:3], [3]bool{true, true, false}, 0, "3 of the 3 input records of a class that meets the models are missing"},
		{"all fail: nothing released", 15, 100, nil, [3]bool{}, 7, ""},
		{"all fail: a class published", 15, 100, all[3:6], [3]bool{}, 0, "publishes 3 records of a class that has 3 records"},
		{"no attack: all pay whatever the loss", 1000, 0, all, [3]bool{true, true, true}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hand := [3]bool{handPayout(10, tc.l, tc.g, 10, ilPair, 3) > 0, handPayout(10, tc.l, tc.g, 10, ilPair, 3) > 0, handPayout(10, tc.l, tc.g, 10, ilOne, 1) > 0}
			if hand != tc.passes {
				t.Fatalf("the hand payouts pass %v, the case says %v", hand, tc.passes)
			}
			spec := missingSpec(t)
			spec.K = 1
			spec.Profitability = &Profitability{Game: game(10, tc.l, tc.g, 10)}
			expectSuppression(t, spec, releaseOf(tc.release...), missingInput, tc.required, tc.violation)
		})
	}
}

// The research subset's population: the subset (missingInput) and four more records.
// At levels (1, 1): (X,[20,29]) 4 population records, (Y,[30,39]) 6, (X,[40,49]) 1;
// the population's 11 distinct ages, of which [20,29] covers 4, [30,39] 6, [40,49] 1.
var profitPopulation = append(slices.Clone(missingInput),
	[]string{"B", "28", "a"}, []string{"D", "39", "a"}, []string{"C", "38", "b"}, []string{"D", "36", "c"})

// profitLeaves is the population's leaves and class counts at levels (1, 1).
func profitLeaves(t *testing.T, spec Spec) (*Leaves, map[string]int64) {
	t.Helper()
	leaves, err := NewLeaves(spec)
	if err != nil {
		t.Fatal(err)
	}
	pop, err := PopulationCounts(spec, []int{1, 1}, leaves.Reading(&records{recs: profitPopulation}))
	if err != nil {
		t.Fatal(err)
	}
	return leaves, pop
}

// TestJournalistProfitability: the journalist's chance is 1 / the class's population
// count, the information loss counted over the population's leaves. IL (X,[20,29]) =
// ln 8 / ln 44 ≈ 0.5495, (Y,[30,39]) ln 12 / ln 44 ≈ 0.6567, (X,[40,49]) ln 2 / ln 44 ≈
// 0.1832; B = 10, G = 100, C = 10: payouts 4.505 − L/4, 3.433 − L/6, 8.168 − L.
// L = 10: 2.005, 1.767, −1.83; L = 20: −0.495, 0.100, −11.8 (the prosecutor's
// chance, 1/3 in the subset, would fail (Y,[30,39]): 3.433 − 6.67).
func TestJournalistProfitability(t *testing.T) {
	il := [3]float64{handLoss([]float64{2, 4}, []float64{4, 11}), handLoss([]float64{2, 6}, []float64{4, 11}), handLoss([]float64{2, 1}, []float64{4, 11})}
	pops := [3]int64{4, 6, 1}
	for _, tc := range []struct {
		name      string
		l         float64
		release   []int
		passes    [3]bool
		required  int
		violation string // ExpectedSuppression's
		released  string // CheckPopulation's on the release
	}{
		{"L 10: the single record left out", 10, []int{0, 1, 2, 3, 4, 5}, [3]bool{true, true, false}, 1, "", ""},
		{"L 10: the single record published", 10, []int{0, 1, 2, 3, 4, 5, 6}, [3]bool{true, true, false}, 0, "has 1 population records, which leave the publisher an expected payout of -1.8", "class of 1 population records leaves the publisher an expected payout of -1.8"},
		{"L 20: only the class of 6 pays", 20, []int{3, 4, 5}, [3]bool{false, true, false}, 4, "", ""},
		{"L 20: a failing class published", 20, []int{0, 1, 2, 3, 4, 5}, [3]bool{false, true, false}, 0, "has 4 population records, which leave the publisher an expected payout of -0.49", "class of 4 population records leaves the publisher an expected payout of -0.49"},
		{"L 20: the paying class left out", 20, nil, [3]bool{false, true, false}, 0, "3 of the 3 input records of a class that meets the models are missing", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hand [3]bool
			least := math.Inf(1)
			for i := range hand {
				p := handPayout(10, tc.l, 100, 10, il[i], pops[i])
				hand[i] = p > 0
				if slices.Contains(tc.release, []int{0, 3, 6}[i]) {
					least = min(least, p)
				}
			}
			if hand != tc.passes {
				t.Fatalf("the hand payouts pass %v, the case says %v", hand, tc.passes)
			}
			g := game(10, tc.l, 100, 10)
			spec := missingSpec(t)
			spec.K, spec.MaxSuppressed = 1, 7
			leaves, pop := profitLeaves(t, spec)
			spec.Profitability = &Profitability{Game: g, Journalist: true}
			spec.Population = &PopulationCheck{Counts: func([]int) (map[string]int64, error) { return pop, nil }, Leaves: leaves}
			expectSuppression(t, spec, releaseOf(tc.release...), missingInput, tc.required, tc.violation)

			// the same on the release path: the journalist's form in CheckPopulation
			rel, err := ReleasedClasses(spec, &records{recs: releaseOf(tc.release...)})
			if err != nil {
				t.Fatal(err)
			}
			m, err := CheckPopulation(Population{Profitability: &g, Loss: leaves.LossAt([]int{1, 1})}, rel, pop)
			var v *Violation
			switch {
			case tc.released == "" && err != nil:
				t.Fatalf("CheckPopulation: %v", err)
			case tc.released == "" && len(tc.release) > 0 && (!m.Payout || !near(m.LeastPayout, least)):
				t.Fatalf("CheckPopulation: least payout %v (measured %v), want %v", m.LeastPayout, m.Payout, least)
			case tc.released != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tc.released)):
				t.Fatalf("CheckPopulation: %v, want a violation saying %q", err, tc.released)
			}
		})
	}
}

// TestJournalistModelProfitability: the journalist's form given as the population
// model's (Population.Profitability) decides ExpectedSuppression as Spec.Profitability
// does; the two given with different amounts are refused.
func TestJournalistModelProfitability(t *testing.T) {
	spec := missingSpec(t)
	spec.K, spec.MaxSuppressed = 1, 7
	leaves, pop := profitLeaves(t, spec)
	g := game(10, 20, 100, 10)
	spec.Population = &PopulationCheck{Model: Population{Profitability: &g}, Counts: func([]int) (map[string]int64, error) { return pop, nil }, Leaves: leaves}
	expectSuppression(t, spec, releaseOf(3, 4, 5), missingInput, 4, "")
	expectSuppression(t, spec, releaseOf(0, 1, 2, 3, 4, 5), missingInput, 0, "has 4 population records")
	spec.Profitability = &Profitability{Game: game(10, 10, 100, 10), Journalist: true}
	rel, err := ReleasedClasses(spec, &records{recs: releaseOf(3, 4, 5)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExpectedSuppression(spec, []int{1, 1}, rel, &records{recs: missingInput}); err == nil || !strings.Contains(err.Error(), "different amounts") {
		t.Errorf("two journalist's games: %v", err)
	}
}

// TestLeaves: a hierarchy file's leaves are its rows, whatever is added; a built
// hierarchy's the distinct values added (a null read as its value); a label that
// covers none is a violation naming the column only.
func TestLeaves(t *testing.T) {
	spec := missingSpec(t)
	null := "21"
	spec.Utility[1].Null = &null
	l, err := NewLeaves(spec)
	if err != nil {
		t.Fatal(err)
	}
	must := func(il float64, err error) float64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return il
	}
	key := string(appendValueKey(nil, "X", "[20,29]"))
	if _, err := l.Loss([]int{1, 1}, key); err == nil || !strings.Contains(err.Error(), "no leaves") {
		t.Errorf("nothing added: %v", err)
	}
	for _, r := range [][]string{{"A", "21"}, {"A", ""}, {"B", "22"}, {"Q", "35"}} {
		if err := l.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	// ages 21 (twice, once as the null), 22, 35: [20,29] covers 2 of 3; X 2 of 4 rows
	if got, want := must(l.Loss([]int{1, 1}, key)), handLoss([]float64{2, 2}, []float64{4, 3}); got != want {
		t.Errorf("loss %v, want %v", got, want)
	}
	if got, want := must(l.Loss([]int{2, 0}, string(appendValueKey(nil, "*", "35")))), handLoss([]float64{4, 1}, []float64{4, 3}); got != want {
		t.Errorf("loss at (2, 0) %v, want %v", got, want)
	}
	_, err = l.Loss([]int{1, 1}, string(appendValueKey(nil, "X", "[90,99]")))
	var v *Violation
	if !errors.As(err, &v) || !strings.Contains(err.Error(), `"age"`) || strings.Contains(err.Error(), "[90,99]") {
		t.Errorf("a label of no leaf: %v", err)
	}
	// a value added after a level was counted counts
	if err := l.Add([]string{"C", "29"}); err != nil {
		t.Fatal(err)
	}
	if got, want := must(l.Loss([]int{1, 1}, key)), handLoss([]float64{2, 3}, []float64{4, 4}); got != want {
		t.Errorf("loss after an addition %v, want %v", got, want)
	}
}

// TestProfitPathsAgree: the Counter's loss (from what the released values cover) and
// Leaves's (from the labels at the levels) are the same float64, so that the release's
// check and the expected suppression decide a class alike.
func TestProfitPathsAgree(t *testing.T) {
	spec := missingSpec(t)
	spec.K = 1
	g := game(10, 6, 100, 10)
	spec.Profitability = &Profitability{Game: g}
	uc := utilityCase{spec: spec}
	for i, r := range releaseOf(0, 1, 2, 3, 4, 5, 6) {
		uc.released = append(uc.released, [2][]string{r, missingInput[i][:2]})
	}
	m, err := uc.measure(t)
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := NewLeaves(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range missingInput {
		if err := leaves.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	least := math.Inf(1)
	for _, c := range []struct {
		dept, age string
		n         int64
	}{{"X", "[20,29]", 3}, {"Y", "[30,39]", 3}, {"X", "[40,49]", 1}} {
		il, err := leaves.Loss([]int{1, 1}, string(appendValueKey(nil, c.dept, c.age)))
		if err != nil {
			t.Fatal(err)
		}
		least = min(least, g.Payout(il, c.n))
	}
	if !m.Payout || m.LeastPayout != least {
		t.Errorf("the Counter's least payout %v (measured %v), the labels' %v", m.LeastPayout, m.Payout, least)
	}
}
