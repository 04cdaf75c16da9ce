package verify

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestClassKeys numbers random keys (repeats, prefixes of one another, the empty key,
// keys about as long as a block) against a map, through several growths of the table
// and many blocks.
func TestClassKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tab := newClassKeys()
	want := map[string]int32{}
	var order []string
	for range 50000 {
		var k string
		switch rng.IntN(4) {
		case 0:
			k = ""
		case 1:
			k = "a" + strconv.Itoa(rng.IntN(30)) // short keys, prefixes of the next kind
		case 2:
			if rng.IntN(2000) == 0 { // longer than a block, or than what a block has left
				k = strings.Repeat("b", keyBlock-entryHead-rng.IntN(3)+rng.IntN(3))
				break
			}
			fallthrough
		default:
			k = "a" + strconv.Itoa(rng.IntN(30000))
		}
		c, added, ok := tab.class([]byte(k))
		if !ok {
			t.Fatal("table full")
		}
		w, seen := want[k]
		if !seen {
			w = int32(len(order))
			want[k] = w
			order = append(order, k)
		}
		if c != w || added == seen {
			t.Fatalf("key %q: class %d (added %v), want %d (added %v)", k, c, added, w, !seen)
		}
	}
	if tab.len() != len(order) || len(tab.slots) < 2*tab.len() {
		t.Fatalf("%d classes in %d slots, want %d classes", tab.len(), len(tab.slots), len(order))
	}
	long := 0
	for i, b := range tab.blocks {
		if cap(b) > keyBlock {
			long++
			if len(b) != cap(b) {
				t.Errorf("block %d: a long entry's block of %d bytes holds %d", i, cap(b), len(b))
			}
		}
	}
	if len(tab.blocks) < 8 || long < 2 {
		t.Fatalf("%d blocks, %d of a long entry: too few for the test", len(tab.blocks), long)
	}
	for c, k := range order {
		if got := tab.key(int32(c)); got != k {
			t.Fatalf("class %d: key %q, want %q", c, got, k)
		}
	}
}

// TestClassTable numbers random keys of numbers against a map: packed while the
// numbers fit in 64 bits (the columns widening as the numbers grow, the table growing),
// then by their values ("v" and the number) once they do not, the classes keeping
// their numbers across.
func TestClassTable(t *testing.T) {
	for _, q := range []int{0, 1, 3, 9} {
		rng := rand.New(rand.NewPCG(uint64(q), 11))
		tab := newClassTable(q)
		want := map[string]int32{}
		var order [][]int32
		valueKey := func(ids []int32) []byte {
			var vals []string
			for _, id := range ids {
				vals = append(vals, "v"+strconv.Itoa(int(id)))
			}
			return appendValueKey(nil, vals...)
		}
		top := 1 // the numbers grow as the records go on
		for step := range 200 {
			n := 1 + rng.IntN(300)
			rids := make([]int32, 0, n*q)
			for range n * q {
				rids = append(rids, int32(rng.IntN(top)))
			}
			out := make([]int32, n)
			i, fits, err := 0, false, error(nil)
			if tab.values == nil {
				i, fits, err = tab.byNumbers(rids, n, out)
				if !fits {
					if err := tab.toValues(func(c int32) []byte { return valueKey(order[c]) }); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tab.values != nil {
				var keys []byte
				var ends []int
				for i := range n {
					keys = append(keys, valueKey(rids[i*q:(i+1)*q])...)
					ends = append(ends, len(keys))
				}
				i, err = tab.byValues(keys, ends, out)
			}
			if err != nil || i != n {
				t.Fatalf("step %d: %d, %v", step, i, err)
			}
			for i := range n {
				key := rids[i*q : (i+1)*q]
				k := fmt.Sprint(key)
				w, ok := want[k]
				if !ok {
					w = int32(len(order))
					want[k] = w
					order = append(order, slices.Clone(key))
				}
				if out[i] != w {
					t.Fatalf("q %d, step %d: key %v: class %d, want %d", q, step, key, out[i], w)
				}
			}
			if step%20 == 19 {
				top = min(2*top, 1<<20)
			}
		}
		if tab.len() != len(order) {
			t.Fatalf("q %d: %d classes, want %d", q, tab.len(), len(order))
		}
		fields := make([]string, q)
		for c, key := range order {
			if tab.values == nil {
				if got := tab.idsOf(int32(c)); !slices.Equal(got, key) {
					t.Fatalf("q %d: class %d: key %v, want %v", q, c, got, key)
				}
				continue
			}
			if !tab.valuesOf(int32(c), fields) || string(appendValueKey(nil, fields...)) != string(valueKey(key)) {
				t.Fatalf("q %d: class %d: values %q, want those of %v", q, c, fields, key)
			}
		}
		if byValues := tab.values != nil; byValues != (q == 9) {
			t.Errorf("q %d: keyed by values %v", q, byValues)
		}
	}
}
