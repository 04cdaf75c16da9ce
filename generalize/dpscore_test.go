package generalize

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// dpScores is every node's score s on the dataset tab (a search's sample), at k.
func dpScores(t *testing.T, tab *Table, s DPScore, k int, beta *big.Rat) []*big.Rat {
	t.Helper()
	sc, err := newScorer(tab, DPWalkOptions{K: k, Score: s, Beta: beta})
	if err != nil {
		t.Fatal(err)
	}
	lat := tab.lattice()
	out := make([]*big.Rat, lat.Size())
	for n := range out {
		if out[n], err = sc.score(lat, n); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestDPScoreSensitivity: every score of SafePub's search changes by at most 1 (its
// sensitivity, divided out) at every node when one record is added to its dataset
// (the search's sample, which the scores take as all there is): random small tables,
// k from 1 to 6, the record added anywhere (often completing a class of k−1). The
// exponential mechanism's privacy rests on this bound. (Dividing the loss by d
// instead of d·max(1, k−1) fails it.)
func TestDPScoreSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 5))
	trials := 400
	if testing.Short() {
		trials = 100
	}
	for trial := range trials {
		n := rng.IntN(40)
		leaves := []int{2 + rng.IntN(4), 2 + rng.IntN(6), 1 + rng.IntN(3)}[:1+rng.IntN(3)]
		withT := uniformTable(rng, n+1, leaves) // the last record is the one added
		without, err := withT.Select(seq(n))
		if err != nil {
			t.Fatal(err)
		}
		k := 1 + rng.IntN(6)
		beta := big.NewRat(1+rng.Int64N(64), 64) // N is the sample's records ÷ β
		for _, s := range []DPScore{ScoreLoss, ScorePrecision, ScoreDiscernibility, ScoreEntropy, ScoreAECS} {
			a := dpScores(t, without, s, k, beta)
			b := dpScores(t, withT, s, k, beta)
			for node := range a {
				diff := new(big.Rat).Sub(a[node], b[node])
				if diff.Abs(diff).Cmp(big.NewRat(1, 1)) > 0 {
					t.Fatalf("trial %d, %v, k=%d, β=%s, %d records, node %d: the score moves by %s, above its sensitivity 1", trial, s, k, beta.RatString(), n, node, diff.FloatString(4))
				}
			}
		}
	}
}

// seq is 0 … n−1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestDPScoreValues: the scores of a dataset small enough to work out by hand (the
// values below were): two columns, four records, k = 2.
func TestDPScoreValues(t *testing.T) {
	rows := func(names ...string) [][]string {
		var out [][]string
		for _, n := range names {
			out = append(out, []string{n, "g" + n[:1], Top})
		}
		return out
	}
	h1, err := NewHierarchy("a", rows("a1", "a2", "b1", "b2"))
	if err != nil {
		t.Fatal(err)
	}
	h2, err := NewHierarchy("x", [][]string{{"x", Top}, {"y", Top}})
	if err != nil {
		t.Fatal(err)
	}
	tab := &Table{Rows: 4, Columns: []Column{{Name: "a", Hierarchy: h1, Codes: NewCodes(4, 4)}, {Name: "x", Hierarchy: h2, Codes: NewCodes(4, 2)}}}
	for r, v := range [][2]int32{{0, 0}, {1, 0}, {2, 1}, {0, 1}} { // a1 x, a2 x, b1 y, a1 y
		tab.Columns[0].Codes.Set(r, v[0])
		tab.Columns[1].Codes.Set(r, v[1])
	}
	lat := tab.lattice()
	node := func(l1, l2 int) int { return l1*2 + l2 }
	for _, c := range []struct {
		s    DPScore
		node int
		want string
	}{
		// At (1, 1): classes (ga, *) of 3 records and (gb, *) of 1: 3 released, 1
		// suppressed.
		// loss: (3·2/4 + 3·1/1 + 2·1) / (2·1) = (1.5 + 3 + 2)/2
		{ScoreLoss, node(1, 1), "-13/4"},
		// precision: (3·1/2 + 3·1/1 + 2) / 2
		{ScorePrecision, node(1, 1), "-13/4"},
		// discernibility: (3² + 4·1) / (4·5): c_2 = 4/1 + 1 = 5
		{ScoreDiscernibility, node(1, 1), "-13/20"},
		// entropy: column a: 3² (ga, not the top) + 4·1; column x: 4·(3 + 1), all top;
		// (13 + 16) / (4·2·5)
		{ScoreEntropy, node(1, 1), "-29/40"},
		// aecs: one released class, and a record suppressed
		{ScoreAECS, node(1, 1), "2"},
		// At the bottom every class has one record: all 4 suppressed.
		{ScoreLoss, node(0, 0), "-4"},
		{ScoreAECS, node(0, 0), "1"},
		// At the top: one class of 4; loss (4·1 + 4·1) / 2, nothing suppressed
		{ScoreLoss, node(2, 1), "-4"},
		{ScoreDiscernibility, node(2, 1), "-4/5"},
		{ScoreAECS, node(2, 1), "1"},
	} {
		got := dpScores(t, tab, c.s, 2, nil)[c.node]
		if got.RatString() != c.want {
			t.Errorf("%v at %v: %s, want %s", c.s, lat.Levels(c.node, nil), got.RatString(), c.want)
		}
	}
}

// fixedSource is a deterministic stream of bytes for the draws of a test.
type fixedSource struct{ rng *rand.ChaCha8 }

func (f fixedSource) Read(p []byte) (int, error) { return f.rng.Read(p) }

// TestSafePubWalk: with an ε so large that every draw takes a best score, the walk's
// path is a greedy walk by a brute-force scoring (records grouped by their values at
// each node with a map): from the top, each pivot a candidate of the best score (ties
// either way) among the specializations of the pivots so far not drawn since, at
// most its steps, fewer only when no candidate is left; and its node a pivot of the
// best score.
func TestSafePubWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 40))
	for trial := range 40 {
		tab := uniformTable(rng, 20+rng.IntN(200), []int{2 + rng.IntN(5), 2 + rng.IntN(8), 2 + rng.IntN(3)})
		k := 1 + rng.IntN(8)
		steps := 1 + rng.IntN(12)
		s := DPScore(rng.IntN(5))
		opt := DPWalkOptions{K: k, Score: s, Epsilon: big.NewRat(1e12, 1), Steps: steps, Random: fixedSource{rand.NewChaCha8([32]byte{byte(trial)})}}
		w, err := SafePubWalk(context.Background(), tab, opt)
		if err != nil {
			t.Fatal(err)
		}
		if msg := greedyPath(tab, opt, w); msg != "" {
			t.Errorf("trial %d (%v, k=%d, %d steps): %s", trial, s, k, steps, msg)
		}
	}
}

// greedyPath checks w against SafePub's walk where every draw takes a best score.
func greedyPath(tab *Table, opt DPWalkOptions, w *DPWalk) string {
	lat := tab.lattice()
	index := func(levels []int) int {
		n := 0
		for i, l := range levels {
			n = n*lat.Heights[i] + l
		}
		return n
	}
	score := func(n int) *big.Rat { return bruteScore(tab, lat.Levels(n, nil), opt) }
	if len(w.Path) == 0 || index(w.Path[0]) != lat.Size()-1 || w.Steps != len(w.Path)-1 || w.Steps > opt.Steps {
		return fmt.Sprintf("path %v in %d steps: not from the top, or too long", w.Path, w.Steps)
	}
	pivot := lat.Size() - 1
	var cand []int
	for step := 1; ; step++ {
		lat.Down(pivot, func(p int) {
			for _, c := range cand {
				if c == p {
					return
				}
			}
			cand = append(cand, p)
		})
		cand = removeNode(cand, pivot)
		if step > opt.Steps || len(cand) == 0 {
			if step <= len(w.Path)-1 {
				return fmt.Sprintf("the walk went on at step %d with no step or candidate left", step)
			}
			break
		}
		if step >= len(w.Path) {
			return fmt.Sprintf("the walk stopped at step %d with %d candidates and steps left", step, len(cand))
		}
		next := index(w.Path[step])
		best := score(cand[0])
		found := false
		for _, c := range cand {
			if score(c).Cmp(best) > 0 {
				best = score(c)
			}
			found = found || c == next
		}
		if !found || score(next).Cmp(best) != 0 {
			return fmt.Sprintf("step %d drew %v, not a candidate of the best score %s", step, w.Path[step], best.FloatString(3))
		}
		pivot = next
	}
	seen := map[int]bool{}
	var top *big.Rat
	for _, p := range w.Path {
		seen[index(p)] = true
		if s := score(index(p)); top == nil || s.Cmp(top) > 0 {
			top = s
		}
	}
	if !seen[index(w.Node)] || score(index(w.Node)).Cmp(top) != 0 || w.Pivots != len(seen) {
		return fmt.Sprintf("node %v is not a pivot of the best score %s among %d (the walk says %d)", w.Node, top.FloatString(3), len(seen), w.Pivots)
	}
	return ""
}

// bruteScore is the score at levels of every record of tab (all drawn), its classes
// grouped by a map of their values' codes.
func bruteScore(tab *Table, levels []int, opt DPWalkOptions) *big.Rat {
	groups := map[string]*nodeClass{}
	var order []string
	for r := range tab.Rows {
		codes := make([]int32, len(levels))
		for i, c := range tab.Columns {
			codes[i] = c.Hierarchy.Code(levels[i], c.Codes.At(r))
		}
		key := fmt.Sprint(codes)
		if groups[key] == nil {
			groups[key] = &nodeClass{codes: codes}
			order = append(order, key)
		}
		groups[key].count++
	}
	in := scoreInput{cols: tab.Columns, levels: levels, k: int64(opt.K), input: big.NewRat(int64(tab.Rows), 1)}
	for _, key := range order {
		in.classes = append(in.classes, *groups[key])
	}
	s, err := dpScore(opt.Score, in)
	if err != nil {
		panic(err)
	}
	return s
}

// TestScorerClassesAt: the sample's classes at a node are the same counted densely
// (few value combinations), by a map of packed words (too many to count densely), and
// by a map of byte keys (codes wider than a word together): each against a grouping
// of the records by a map of their values.
func TestScorerClassesAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, leaves := range [][]int{
		{5, 7, 3},                           // dense
		{200, 300, 150, 250},                // 2.25·10⁹ combinations at the bottom, 32 bits: packed
		{60000, 60000, 60000, 60000, 60000}, // 80 bits: byte keys
	} {
		tab := uniformTable(rng, 3000, leaves)
		sc, err := newScorer(tab, DPWalkOptions{K: 1})
		if err != nil {
			t.Fatal(err)
		}
		lat := tab.lattice()
		for range 20 {
			levels := lat.Levels(rng.IntN(lat.Size()), nil)
			got := map[string]int64{}
			for _, c := range sc.classesAt(levels) {
				got[fmt.Sprint(c.codes)] += c.count
			}
			want := map[string]int64{}
			for r := range tab.Rows {
				codes := make([]int32, len(levels))
				for i, c := range tab.Columns {
					codes[i] = c.Hierarchy.Code(levels[i], c.Codes.At(r))
				}
				want[fmt.Sprint(codes)]++
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("leaves %v at %v: %d classes, the grouping's %d, or other counts", leaves, levels, len(got), len(want))
			}
		}
	}
}
