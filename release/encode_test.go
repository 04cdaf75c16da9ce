package release

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/schema"
	"sanitizer/table"
)

// countingSource is an input of n batches of two columns, sex and age (a value listed
// in the hierarchy, or bad in batch badAt: bad), that counts the batches it reads. Like
// the file sources, it reads a batch before it waits to hand it over.
type countingSource struct {
	n, badAt int
	bad      string // "": a null
	read     atomic.Int32
}

func (s *countingSource) Metadata() map[string]string { return nil }

func (s *countingSource) Columns() []table.Column {
	return []table.Column{{Name: "sex", Type: schema.String}, {Name: "age", Type: schema.Integer}}
}

func (s *countingSource) Stream(ctx context.Context, cols []int, out chan<- *table.Batch) error {
	defer close(out)
	for k := range s.n {
		s.read.Add(1)
		b := table.NewBatch(k*table.BatchRows, len(cols))
		for i := range table.BatchRows {
			for _, c := range cols {
				v := "F"
				if c == 1 {
					v = strconv.Itoa(i % 90)
				}
				b.Fields = append(b.Fields, v)
			}
			if k == s.badAt && i == 7 {
				if s.bad == "" {
					b.SetNull(len(b.Fields) - len(cols))
				} else {
					b.Fields[len(b.Fields)-len(cols)] = s.bad
				}
			}
		}
		b.N = table.BatchRows
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s *countingSource) Rewind() error    { return nil }
func (s *countingSource) Unchanged() error { return nil }
func (s *countingSource) Rows() int        { return int(s.read.Load()) * table.BatchRows }
func (s *countingSource) Close() error     { return nil }

// TestEncodeStopsAtFirstError: pass 1 stops reading soon after the first bad value
// (a value its hierarchy file does not list, a null without null-as), however long
// the input, and reports its row.
func TestEncodeStopsAtFirstError(t *testing.T) {
	sex, _ := filepath.Abs("../testdata/hierarchies/sex.csv")
	cfg, err := schema.Parse([]byte(`dataset: d
columns:
  sex: {role: quasi, hierarchy: {file: "`+sex+`"}}
  age: {role: quasi, type: integer, hierarchy: {intervals: [10]}}
privacy: {k: 2}
`), "c.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	fileHier := []*generalize.Hierarchy{nil, nil}
	if fileHier[0], err = generalize.LoadHierarchy(sex); err != nil {
		t.Fatal(err)
	}
	const batches, badAt = 400, 2
	for _, tc := range []struct {
		name, bad, want string
	}{
		{"value not in the hierarchy", "Zq9SECRET", "not listed"},
		{"null without null-as", "", "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &countingSource{n: batches, badAt: badAt, bad: tc.bad}
			p, err := newPlan(cfg, "in.csv", "out.csv", src.Columns())
			if err != nil {
				t.Fatal(err)
			}
			_, err = encode(context.Background(), p, src, fileHier, nil, nil, nil)
			row := strconv.Itoa(badAt*table.BatchRows + 8)
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "row "+row) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Zq9SECRET") {
				t.Fatalf("got %v, want bad input naming row %s", err, row)
			}
			// What is read after the bad batch is at most what the stages' channels
			// hold between the reader and the encoders.
			if n := src.read.Load(); n > badAt+16 {
				t.Fatalf("%d of %d batches read, the bad value in batch %d", n, batches, badAt+1)
			}
		})
	}
}

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

// TestDictionaryCache: the cache in front of a dictionary's index never gives one value
// another's number: values alike in length and first and last 8 bytes, short values
// that differ in one byte, the empty value, and more values than the cache has slots.
func TestDictionaryCache(t *testing.T) {
	values := []string{"", "\x00", "a", "b", "ab", "ba", "abcdefgh", "abcdefgi",
		"aaaaaaaaXbbbbbbbb", "aaaaaaaaYbbbbbbbb", "aaaaaaaaXYbbbbbbbb", "aaaaaaaaYXbbbbbbbb",
		"0123456789abcdef", "0123456789abcdeF", "0123456789abcde"}
	for i := range 5000 {
		values = append(values, "v"+strconv.Itoa(i))
	}
	d := newDictionary()
	want := map[string]int32{}
	for round := range 3 {
		for i, v := range values {
			if round == 1 && i%2 == 0 {
				continue // another order of lookups
			}
			c, ok := d.lookup(v)
			if w, seen := want[v]; seen != ok || (ok && c != w) {
				t.Fatalf("round %d: %q: number %d (found %v), want %d (seen %v)", round, v, c, ok, w, seen)
			}
			if !ok {
				c = int32(len(d.values))
				d.index[v], d.values = c, append(d.values, v)
				want[v] = c
			}
		}
	}
}
