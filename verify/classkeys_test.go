package verify

import (
	"math/rand/v2"
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
