package verify

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
)

// refTruthful is the truthfulness walk without memos: every pair of values decided
// by its cover, every time.
func refTruthful(t Truth, inHeader []string, in, rel [][]string, matched func(r, x []string), left func(x []string)) (int, error) {
	pos := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		pos[i] = -1
		for j, h := range inHeader {
			if h == c {
				pos[i] = j
			}
		}
	}
	match := func(r, x []string) bool {
		for i, p := range pos {
			if r[i] == x[p] {
				continue
			}
			cv := t.Covers[t.Columns[i]]
			if cv == nil {
				return false
			}
			if ok, err := cv(r[i], x[p]); !ok || err != nil {
				return false
			}
		}
		return true
	}
	suppressed, k := 0, 0
	for _, r := range rel {
		for {
			if k == len(in) {
				return suppressed, errors.New("not matched")
			}
			x := in[k]
			k++
			if match(r, x) {
				matched(r, x)
				break
			}
			left(x)
			if suppressed++; suppressed > t.MaxSuppressed {
				return suppressed, errors.New("too many suppressed")
			}
		}
	}
	for ; k < len(in); k++ {
		left(in[k])
		if suppressed++; suppressed > t.MaxSuppressed {
			return suppressed, errors.New("too many suppressed")
		}
	}
	return suppressed, nil
}

// aliased are n values that are substrings of one string: many share the address of
// their bytes and differ in length, some are equal at different addresses.
func aliased(rng *rand.Rand, n int) []string {
	big := strings.Repeat("0123456789abcdef", 8) + strings.Repeat("ab", 40)
	out := make([]string, n)
	for i := range out {
		at := rng.IntN(len(big) - 40)
		if i%3 == 0 && i > 0 {
			at = strings.Index(big, out[i-1][:1]) // often the address of another
		}
		out[i] = big[at : at+1+rng.IntN(30)]
	}
	return out
}

// TestTruthfulMemo holds the walk with its memos to the walk that decides every pair
// by its cover: the same records left out and the same outcome, on values that alias
// one another (one address, other lengths; equal values at other addresses; values
// alike but in their middle bytes), on more pairs than a memo takes and for longer
// than a memo keeps its strings. A pair remembered as covering must never make
// another pair of the same address, length or outer bytes cover.
func TestTruthfulMemo(t *testing.T) {
	for seed, tc := range []struct {
		records, origs, rels, ps int
		memoUsed                 bool // the memo decides most matches
	}{
		{2*strMemoPeriod + 5000, 300, 60, 1, false}, // more pairs than a memo takes, past its letting go
		{20000, 300, 60, 3, false},
		{20000, 30, 10, 3, true},
		{50000, 20, 8, 1, true},
	} {
		rng := rand.New(rand.NewPCG(uint64(seed), 77))
		origs := append(aliased(rng, tc.origs), lookalikes(tc.origs/8, 20)...)
		rels := append(aliased(rng, tc.rels), lookalikes(tc.rels/4, 20)...)
		// covers decides by the values alone (as a Cover must), about three pairs in
		// four
		covers := func(r, o string) bool {
			h := fnv.New32a()
			h.Write([]byte(r + "\x00" + o))
			return h.Sum32()%4 != 0
		}
		matches := 0 // pairs the cover found to match
		tr := Truth{Columns: []string{"q", "p"}, MaxSuppressed: 1 << 30, Covers: map[string]Cover{
			"q": func(r, o string) (bool, error) {
				ok := covers(r, o)
				if ok {
					matches++
				}
				return ok, nil
			}}}
		inHeader := []string{"p", "q"}
		var in, rel [][]string
		for range tc.records {
			x := []string{fmt.Sprint(rng.IntN(tc.ps)), origs[rng.IntN(len(origs))]}
			in = append(in, x)
			switch rng.IntN(500) {
			case 0: // left out
			case 1: // a released value that may cover nothing here
				rel = append(rel, []string{rels[rng.IntN(len(rels))], x[0]})
			default:
				r := x[1]
				for range 10 {
					if c := rels[rng.IntN(len(rels))]; covers(c, x[1]) {
						r = c
						break
					}
				}
				rel = append(rel, []string{r, x[0]})
			}
		}
		nop := func([]string) {}
		want, wantErr := refTruthful(tr, inHeader, in, rel, func(_, _ []string) {}, nop)
		matches = 0
		got, err := Truthful(tr, inHeader, &records{recs: in}, &records{recs: rel})
		if got != want || (err == nil) != (wantErr == nil) {
			t.Fatalf("seed %d: suppressed %d, %v; without memos %d, %v", seed, got, err, want, wantErr)
		}
		// each pair of strings decided once
		if tc.memoUsed && matches > len(origs)*len(rels) {
			t.Errorf("seed %d: %d matches decided by the cover for %d records, %d pairs of values: the memo is not used", seed, matches, tc.records, len(origs)*len(rels))
		}
	}
}

// TestTruthfulCounts: a Counter fed by the walk (Truth.Count) measures what it
// measures fed the walk's matches and records left out one at a time.
func TestTruthfulCounts(t *testing.T) {
	dom, err := MaskDomain(true, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 55))
	spec := Spec{K: 1, MaxSuppressed: 1 << 30, Columns: []string{"q", "z", "s"}, Quasi: []string{"q", "z"},
		Sensitive:  []Sensitive{{Column: "s", Values: []string{"a", "b", "c"}}},
		Utility:    []Quasi{{Column: "q", Domain: dom}, {Column: "z", Domain: dom}},
		FullDomain: true}
	tr := Truth{Columns: spec.Columns, MaxSuppressed: spec.MaxSuppressed,
		Covers: map[string]Cover{"q": CoverMask(true), "z": CoverMask(true)}}
	inHeader := []string{"s", "z", "q"}
	mask := func(v string, j int) string { return v[:len(v)-j] + strings.Repeat("*", j) }
	var in, rel [][]string
	for range 100000 {
		q, z := fmt.Sprint(100+rng.IntN(900)), fmt.Sprint(1000+rng.IntN(40))
		x := []string{[]string{"a", "b", "c"}[rng.IntN(3)], z, q}
		in = append(in, x)
		if rng.IntN(50) > 0 {
			rel = append(rel, []string{mask(q, 1), mask(z, 2), x[0]})
		}
	}
	spec.InputRows = len(in)
	spec.Sensitive[0].Reference = make([]int64, 3)
	for _, x := range in {
		spec.Sensitive[0].Reference[x[0][0]-'a']++
	}

	ref, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	var cerr error
	_, err = refTruthful(tr, inHeader, in, rel,
		func(r, x []string) {
			if cerr == nil {
				cerr = ref.AddMatched(r, []string{x[2], x[1]})
			}
		},
		func(x []string) {
			if cerr == nil {
				cerr = ref.AddSuppressed([]string{x[2], x[1]})
			}
		})
	if err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	want, err := ref.Finish()
	if err != nil {
		t.Fatal(err)
	}

	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	tr.Count = c
	if _, err := Truthful(tr, inHeader, &records{recs: in}, &records{recs: rel}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	// The entropy sums a class's histogram in map order: equal up to rounding.
	if !near(got.Sensitive[0].MinEntropyL, want.Sensitive[0].MinEntropyL) {
		t.Errorf("entropy l %v, record by record %v", got.Sensitive[0].MinEntropyL, want.Sensitive[0].MinEntropyL)
	}
	got.Sensitive[0].MinEntropyL = want.Sensitive[0].MinEntropyL
	if fmt.Sprint(*got) != fmt.Sprint(*want) {
		t.Errorf("counted in the walk:\n%+v\nrecord by record:\n%+v", *got, *want)
	}
	if got.Rows != len(rel) || got.Loss == 0 || got.Sensitive[0].MinDistinct != 3 {
		t.Errorf("measured %+v: the test measures nothing", *got)
	}
}

// TestCounterByValues: a quasi-identifier with more released values than are numbered
// (numberedMax) makes the classes keyed by their values from then on, the classes
// counted so far kept: the classes and the loss are those counted by hand, whether
// the walk counts or the records are added one at a time.
func TestCounterByValues(t *testing.T) {
	dom, err := MaskDomain(true, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 88))
	spec := Spec{K: 1, MaxSuppressed: 1 << 30, Columns: []string{"q", "z"}, Quasi: []string{"q", "z"},
		Utility:    []Quasi{{Column: "q", Domain: dom}, {Column: "z", Domain: dom}},
		FullDomain: true}
	tr := Truth{Columns: spec.Columns, MaxSuppressed: spec.MaxSuppressed,
		Covers: map[string]Cover{"q": CoverMask(true), "z": CoverMask(true)}}
	var in, rel [][]string
	class := map[string]int{}
	suppressed := 0
	for i := range 40000 {
		// q released as itself (some 30,000 values), z as "10**", covering its 40 leaves
		q, z := fmt.Sprint(10000+rng.IntN(90000)), fmt.Sprint(1000+rng.IntN(40))
		in = append(in, []string{q, z})
		if i%50 == 7 {
			suppressed++
			continue
		}
		rel = append(rel, []string{q, "10**"})
		class[q]++
	}
	if len(class) <= numberedMax {
		t.Fatalf("%d values: not more than are numbered", len(class))
	}
	spec.InputRows = len(in)
	minClass := len(in)
	for _, n := range class {
		minClass = min(minClass, n)
	}
	// loss: 0 for q (itself), 1 for z (every leaf), 1 for both of a suppressed record
	wantLoss := float64(len(rel)+2*suppressed) / float64(2*len(in))

	for _, walk := range []bool{false, true} {
		c, err := NewCounter(spec, spec.Columns)
		if err != nil {
			t.Fatal(err)
		}
		if walk {
			tr.Count = c
			if _, err := Truthful(tr, spec.Columns, &records{recs: in}, &records{recs: rel}); err != nil {
				t.Fatal(err)
			}
		} else {
			k := 0
			for _, r := range rel {
				for ; in[k][0] != r[0]; k++ {
					if err := c.AddSuppressed(in[k]); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.AddMatched(r, in[k]); err != nil {
					t.Fatal(err)
				}
				k++
			}
			for ; k < len(in); k++ {
				if err := c.AddSuppressed(in[k]); err != nil {
					t.Fatal(err)
				}
			}
		}
		m, err := c.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if c.classes.values == nil {
			t.Errorf("walk %v: the classes are still keyed by numbers", walk)
		}
		if m.Rows != len(rel) || m.Classes != len(class) || m.MinClass != minClass || !near(m.Loss, wantLoss) {
			t.Errorf("walk %v: %d records, %d classes, smallest %d, loss %v; want %d, %d, %d, %v",
				walk, m.Rows, m.Classes, m.MinClass, m.Loss, len(rel), len(class), minClass, wantLoss)
		}
	}
}
