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

// TestMergerMatchesMap: a chunk's entries mapped (repack) and merged are, person by
// person, the distinct mapped words in order of first appearance with their summed counts, whether a
// person's run is short (compared with every entry) or long (a table of its entries).
func TestMergerMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for trial := range 200 {
		c := newGroupedCase(rng, 1+rng.IntN(20), []int{3, 30, 300}[trial%3], trial%2 == 0)
		m := &merger{run: -1}
		words := make([]uint64, len(c.words))
		repack(words, c.words, c.maps, c.pack, changedFields(c.maps))
		m.merge(words, c.counts)
		words = nil
		var counts, firsts []int32
		ones := true
		at := map[uint64]int{}
		for j := range c.words {
			if c.words[j]&personMark != 0 {
				firsts = append(firsts, int32(len(words)))
				clear(at)
			}
			w, n := c.mapped(j)
			if i, ok := at[w]; ok {
				counts[i] += n
				ones = false
				continue
			}
			at[w] = len(words)
			words, counts = append(words, w), append(counts, n)
			ones = ones && n == 1
		}
		if !slices.Equal(m.words, words) || !slices.Equal(m.counts, counts) || !slices.Equal(m.firsts, firsts) || m.ones != ones {
			t.Fatalf("trial %d: merged %v %v %v %v, want %v %v %v %v", trial, m.words, m.counts, m.firsts, m.ones, words, counts, firsts, ones)
		}
	}
}

// TestRollUpGroupedMatchesCount: a grouped roll-up's classes have the records and the
// distinct persons a count of the entries finds, on one to three goroutines, in chunks
// of a few persons or all at once; its entries, when kept, are the merged source's,
// and are kept when few enough; past its limit it returns no classes.
func TestRollUpGroupedMatchesCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	kept := 0
	defer func() {
		if kept < 30 {
			t.Errorf("entries kept in %d of 150 trials", kept)
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
		cls, entries := g.rollUpGrouped(src, 7, c.maps, 0, src.n)
		if cls.n != len(want) {
			t.Fatalf("%s: %d classes, want %d", name, cls.n, len(want))
		}
		for j, w := range cls.packed[:cls.n] {
			tl := want[w]
			if tl == nil || cls.counts[j] != tl.rows || int(cls.persons[j]) != len(tl.persons) {
				t.Fatalf("%s: class %x: %d records, %d persons; want %v", name, w, cls.counts[j], cls.persons[j], tl)
			}
		}
		m := &merger{run: -1}
		words := make([]uint64, len(c.words))
		repack(words, c.words, c.maps, c.pack, changedFields(c.maps))
		m.merge(words, c.counts)
		for _, f := range m.firsts {
			m.words[f] |= personMark
		}
		// Kept when, in one chunk on one goroutine, they are at most keepShare
		// quarters of the source's; never other than the merged source's.
		switch {
		case entries == nil && par == 1 && chunk == 0 && len(m.words) <= src.n*keepShare/4:
			t.Fatalf("%s: %d entries of %d not kept", name, len(m.words), src.n)
		case entries != nil && (entries.node != 7 || !slices.Equal(entries.packed, m.words) || !slices.Equal(entries.counts, m.counts)):
			t.Fatalf("%s: entries differ from the merged source", name)
		case entries != nil:
			kept++
		}
		if len(want) > 1 {
			if over, _ := g.rollUpGrouped(src, 7, c.maps, len(want)-1, 0); over != nil {
				t.Fatalf("%s: limit %d: %d classes counted", name, len(want)-1, over.n)
			}
		}
	}
}
