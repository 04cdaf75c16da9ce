package verify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"
)

// TestSeriesDigester: over more rows than three batches, with and without a key, every
// row's entry is its row digest (and its person's), as docs/series.md defines them,
// computed here directly.
func TestSeriesDigester(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	for _, k := range [][]byte{nil, key} {
		width := seriesEntryRows
		if k != nil {
			width = seriesEntryPerson
		}
		d := newSeriesDigester(width, k)
		rest := []int{0, 2}
		n := 3*digestBatchRows + 17
		for i := range n {
			r := []string{fmt.Sprint("v", i%97), "label", fmt.Sprint(i % 5)}
			if got := d.add(r, rest, fmt.Sprint("p", i)); got != i {
				t.Fatalf("row %d numbered %d", i, got)
			}
		}
		d.wait()
		for i := range n {
			var in []byte
			in = append(in, "sanitize-series/1 row\x00"...)
			for _, v := range []string{fmt.Sprint("v", i%97), fmt.Sprint(i % 5)} {
				in = binary.AppendUvarint(in, uint64(len(v)))
				in = append(in, v...)
			}
			sum := sha256.Sum256(in)
			want := sum[:16]
			if k != nil {
				m := hmac.New(sha256.New, k)
				m.Write([]byte("sanitize-series/1 person\x00" + fmt.Sprint("p", i)))
				want = append(want[:16:16], m.Sum(nil)[:16]...)
			}
			if got := d.entry(i); !bytes.Equal(got, want) {
				t.Fatalf("key %v, row %d: entry %x, want %x", k != nil, i, got, want)
			}
		}
	}
}
