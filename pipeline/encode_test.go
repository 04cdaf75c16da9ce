package pipeline

import "testing"

// TestDictionaryWidens: record numbers survive chunk boundaries and the switches from
// 8 to 16 to 32 bits as a column outgrows 256 and 65,536 values.
func TestDictionaryWidens(t *testing.T) {
	d := newDictionary()
	const n = 3*dictChunk + 17
	want := make([]int32, n)
	for r := range n {
		c := int32(r % 200)
		switch {
		case r > 2*dictChunk+5:
			c = int32(r) // past 65,536 distinct numbers
		case r > dictChunk+3:
			c = int32(r % 1000) // past 256
		}
		want[r] = c
		d.put(c)
		if r == dictChunk && (d.w8 == nil || d.w16 != nil) {
			t.Fatal("a column of 200 values is not held in 8 bits")
		}
		if r == 2*dictChunk && (d.w16 == nil || d.w8 != nil) {
			t.Fatal("a column of 1000 values is not held in 16 bits")
		}
	}
	if d.w32 == nil || d.w16 != nil {
		t.Fatal("the dictionary did not widen to 32 bits")
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
