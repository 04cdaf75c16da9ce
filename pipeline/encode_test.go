package pipeline

import "testing"

// TestDictionaryWidens: record numbers survive chunk boundaries and the switch from 16
// to 32 bits when a column outgrows 65,536 values.
func TestDictionaryWidens(t *testing.T) {
	d := newDictionary()
	const n = 3*dictChunk + 17
	want := make([]int32, n)
	for r := range n {
		c := int32(r % 1000)
		if r > 2*dictChunk+5 {
			c = int32(r) // past 65,536 distinct numbers
		}
		want[r] = c
		d.put(c)
	}
	if d.wide == nil {
		t.Fatal("the dictionary did not widen")
	}
	for r, c := range want {
		if got := d.code(r); got != c {
			t.Fatalf("record %d: %d, want %d", r, got, c)
		}
	}
	leafOf := make([]int32, n)
	for i := range leafOf {
		leafOf[i] = int32(i) * 2
	}
	codes := d.leafCodes(2*n, leafOf)
	for r, c := range want {
		if got := codes.At(r); got != 2*c {
			t.Fatalf("leaf of record %d: %d, want %d", r, got, 2*c)
		}
	}
	if codes.Bytes() != 4*n {
		t.Errorf("codes take %d bytes, want 4 per record", codes.Bytes())
	}
}
