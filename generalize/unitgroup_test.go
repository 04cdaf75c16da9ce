package generalize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// groupedCase is a random grouped table: persons' runs of 1 to most entries, words of
// two 6-bit fields drawn from a few values per person (so that a person's entries
// repeat), counts (or none), and a map of each field.
type groupedCase struct {
	words  []uint64
	counts []int32
	person []int // the person of every entry
	maps   [][]int32
	pack   *packing
}

func newGroupedCase(rng *rand.Rand, persons, most int, counts bool) groupedCase {
	c := groupedCase{pack: newPacking([]int{64, 64})}
	for p := range persons {
		run := 1 + rng.IntN(most)
		values := 1 + rng.IntN([]int{4 * run, run/2 + 1}[rng.IntN(2)]) // few or many repeats
		for j := range run {
			v := rng.IntN(values)
			w := uint64(v%64)<<c.pack.shift[0] | uint64(v/64%64)<<c.pack.shift[1]
			if j == 0 {
				w |= personMark
			}
			c.words = append(c.words, w)
			c.person = append(c.person, p)
			if counts {
				c.counts = append(c.counts, 1+int32(rng.IntN(3)))
			}
		}
	}
	c.maps = make([][]int32, 2)
	for i := range c.maps {
		c.maps[i] = make([]int32, 64)
		for code := range c.maps[i] {
			c.maps[i][code] = int32(code)
			if rng.IntN(2) == 0 {
				c.maps[i][code] = int32(code / (1 + rng.IntN(8)))
			}
		}
	}
	return c
}

// mapped is entry j's word at the maps, unmarked, and its count.
func (c groupedCase) mapped(j int) (uint64, int32) {
	w := c.words[j] &^ personMark
	var out uint64
	for i, m := range c.maps {
		out |= uint64(m[w>>c.pack.shift[i]&c.pack.mask[i]]) << c.pack.shift[i]
	}
	n := int32(1)
	if c.counts != nil {
		n = c.counts[j]
	}
	return out, n
}

// narrowCase is the packing of a groupedCase's node as 32-bit keys (two 6-bit fields).
var narrowCase = narrowPacking([]int{64, 64})

// TestMergerMatchesMap: a chunk's entries mapped (repack, or narrowGrouped to 32-bit
// keys) and merged are, person by person, the distinct mapped words in order of first
// appearance with their summed counts, whether a person's run is short (compared with
// every entry) or long (a table of its entries).
func TestMergerMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for trial := range 200 {
		c := newGroupedCase(rng, 1+rng.IntN(20), []int{3, 30, 300}[trial%3], trial%2 == 0)
		var want []uint64 // the distinct mapped words of each person, in order
		var counts, firsts []int32
		ones := true
		at := map[uint64]int{}
		for j := range c.words {
			if c.words[j]&personMark != 0 {
				firsts = append(firsts, int32(len(want)))
				clear(at)
			}
			w, n := c.mapped(j)
			if i, ok := at[w]; ok {
				counts[i] += n
				ones = false
				continue
			}
			at[w] = len(want)
			want, counts = append(want, w), append(counts, n)
			ones = ones && n == 1
		}
		check := func(name string, got []uint64, m mergedOf) {
			if !slices.Equal(got, want) || !slices.Equal(m.counts, counts) || !slices.Equal(m.firsts, firsts) || m.ones != ones {
				t.Fatalf("trial %d, %s: merged %v %v %v %v, want %v %v %v %v", trial, name, got, m.counts, m.firsts, m.ones, want, counts, firsts, ones)
			}
		}
		wide := &merger[uint64]{run: -1}
		keys := make([]uint64, len(c.words))
		repack(keys, c.words, c.maps, c.pack, changedFields(c.maps))
		wide.merge(keys, c.words, c.counts)
		check("64-bit", wide.words, mergedOf{wide.counts, wide.firsts, wide.ones})
		narrow := &merger[uint32]{run: -1}
		nkeys := make([]uint32, len(c.words))
		narrowGrouped(nkeys, c.words, c.maps, c.pack, narrowCase, changedFields(c.maps))
		narrow.merge(nkeys, c.words, c.counts)
		check("32-bit", c.widen(narrow.words), mergedOf{narrow.counts, narrow.firsts, narrow.ones})
	}
}

// mergedOf is what a merger found besides its words.
type mergedOf struct {
	counts, firsts []int32
	ones           bool
}

// widen returns 32-bit keys (narrowCase's fields) as words of c's packing.
func (c groupedCase) widen(keys []uint32) []uint64 {
	out := make([]uint64, len(keys))
	for j, k := range keys {
		for i := range c.pack.shift {
			out[j] |= uint64(k) >> narrowCase.shift[i] & narrowCase.mask[i] << c.pack.shift[i]
		}
	}
	return out
}

// TestRollUpGroupedMatchesCount: a grouped roll-up's classes have the records and the
// distinct persons a count of the entries finds, on one to three goroutines, in chunks
// of a few persons or all at once, its chunks merged or (keeping nothing, the source
// without counts) counted by person; its entries, when kept, are the merged source's,
// and are kept when few enough; past its limit it returns no classes.
func TestRollUpGroupedMatchesCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	kept := 0
	defer func() {
		if kept < 20 {
			t.Errorf("entries kept in %d of the 100 trials that keep them", kept)
		}
	}()
	for trial := range 150 {
		c := newGroupedCase(rng, 1+rng.IntN(300), []int{4, 40}[trial%2], trial%3 == 0)
		src := &classes{packed: c.words, counts: c.counts, pack: c.pack, n: len(c.words)}
		type tally struct {
			rows    int32
			persons map[int]bool
		}
		want := map[uint64]*tally{}
		for j := range c.words {
			w, n := c.mapped(j)
			if want[w] == nil {
				want[w] = &tally{persons: map[int]bool{}}
			}
			want[w].rows += n
			want[w].persons[c.person[j]] = true
		}
		par, chunk := 1+rng.IntN(3), []int{0, 1 + rng.IntN(20)}[rng.IntN(2)]
		name := fmt.Sprintf("trial%d/entries=%d/par=%d/chunk=%d", trial, src.n, par, chunk)
		g := &grouper{par: par, pack: c.pack, tune: radixTuning{minSource: 1, bucket: 1 + rng.IntN(64), chunk: chunk}}
		var npack *packing // 64-bit keys, or 32-bit ones in every other trial
		if trial%4 >= 2 {
			npack, name = narrowCase, name+"/32-bit"
		}
		keep := src.n // entries kept when few enough; or none, so that a chunk is not merged
		if trial%3 == 1 {
			keep, name = 0, name+"/unmerged"
		}
		cls, entries := g.rollUpGrouped(src, 7, c.maps, npack, 0, keep)
		if cls.n != len(want) || (npack != nil) != (cls.narrow != nil) {
			t.Fatalf("%s: %d classes (narrow %v), want %d", name, cls.n, cls.narrow != nil, len(want))
		}
		for j := range cls.n {
			var w uint64
			for i := range c.maps {
				w |= uint64(cls.code(i, j)) << c.pack.shift[i]
			}
			tl := want[w]
			if tl == nil || cls.counts[j] != tl.rows || int(cls.persons[j]) != len(tl.persons) {
				t.Fatalf("%s: class %x: %d records, %d persons; want %v", name, w, cls.counts[j], cls.persons[j], tl)
			}
		}
		m := &merger[uint64]{run: -1}
		words := make([]uint64, len(c.words))
		repack(words, c.words, c.maps, c.pack, changedFields(c.maps))
		m.merge(words, c.words, c.counts)
		for _, f := range m.firsts {
			m.words[f] |= personMark
		}
		// Kept when, in one chunk on one goroutine, they are at most keepShare
		// quarters of the source's; never other than the merged source's.
		switch {
		case entries == nil && keep > 0 && par == 1 && chunk == 0 && len(m.words) <= src.n*keepShare/4:
			t.Fatalf("%s: %d entries of %d not kept", name, len(m.words), src.n)
		case entries != nil && (entries.node != 7 || !slices.Equal(entries.packed, m.words) || !slices.Equal(entries.counts, m.counts)):
			t.Fatalf("%s: entries differ from the merged source", name)
		case entries != nil:
			kept++
		}
		if len(want) > 1 {
			if over, _ := g.rollUpGrouped(src, 7, c.maps, npack, len(want)-1, 0); over != nil {
				t.Fatalf("%s: limit %d: %d classes counted", name, len(want)-1, over.n)
			}
		}
	}
}

// BenchmarkMergeGrouped measures the merger alone on a chunk of 2^18 grouped entries
// (runs of 1 to 12 entries, a few repeats each, as admissions have), 32-bit keys.
func BenchmarkMergeGrouped(b *testing.B) {
	rng := rand.New(rand.NewPCG(65, 66))
	var c groupedCase
	for len(c.words) < 1<<18 {
		c = newGroupedCase(rng, 80000, 6, false)
	}
	c.words = c.words[:nextPerson(c.words, 1<<18)]
	keys := make([]uint32, len(c.words))
	narrowGrouped(keys, c.words, c.maps, c.pack, narrowCase, changedFields(c.maps))
	m := &merger[uint32]{run: -1}
	b.SetBytes(int64(len(keys)))
	for b.Loop() {
		m.merge(keys, c.words, nil)
	}
}
