package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"sync"
)

// The entries of a series night are digests of every released row (its row digest and,
// with a key, its person's): taken off the truthfulness walk's goroutine, a batch of
// rows at a time, on at most as many goroutines as the machine has cores, so that the
// walk reads on while they are hashed. Each batch writes into a chunk of its own, so
// no goroutine writes where another reads; a batch's goroutine ends when its batch is
// done, whether or not the walk finishes.

// digestBatchRows is the rows of a batch.
const digestBatchRows = 4096

// seriesDigester takes the digests of the rows a SeriesCounter counts.
type seriesDigester struct {
	width  int    // of an entry: the row digest, then with a key the person's
	key    []byte // the series key (nil: rows alone)
	chunks [][]byte
	batch  *digestBatch
	n      int // rows taken
	sem    chan struct{}
	wg     sync.WaitGroup
}

// digestBatch is the pre-images of up to digestBatchRows rows: row i's row digest is
// of buf[rowAt[i]:idAt[i]], its person's of the prefix and buf[idAt[i]:rowAt[i+1]].
type digestBatch struct {
	out         []byte
	buf         []byte
	rowAt, idAt []int32
}

func newSeriesDigester(width int, key []byte) *seriesDigester {
	return &seriesDigester{width: width, key: key, sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))}
}

// add takes row r's digest (its cells at rest, id its person's id) and returns its
// number, by which entry finds it once wait has returned.
func (d *seriesDigester) add(r []string, rest []int, id string) int {
	if d.batch == nil {
		d.batch = &digestBatch{out: make([]byte, digestBatchRows*d.width)}
		d.chunks = append(d.chunks, d.batch.out)
	}
	b := d.batch
	b.rowAt = append(b.rowAt, int32(len(b.buf)))
	b.buf = append(b.buf, seriesRowPrefix...)
	for _, p := range rest {
		b.buf = binary.AppendUvarint(b.buf, uint64(len(r[p])))
		b.buf = append(b.buf, r[p]...)
	}
	b.idAt = append(b.idAt, int32(len(b.buf)))
	b.buf = append(b.buf, id...)
	n := d.n
	if d.n++; len(b.rowAt) == digestBatchRows {
		d.flush()
	}
	return n
}

// flush hands the batch taken so far to a goroutine.
func (d *seriesDigester) flush() {
	b := d.batch
	if b == nil || len(b.rowAt) == 0 {
		return
	}
	d.batch = nil
	b.rowAt = append(b.rowAt, int32(len(b.buf)))
	d.sem <- struct{}{}
	d.wg.Add(1)
	go func() {
		defer func() { <-d.sem; d.wg.Done() }()
		d.hash(b)
	}()
}

// hash writes the digests of batch b into its chunk.
func (d *seriesDigester) hash(b *digestBatch) {
	row := sha256.New()
	var person interface {
		Reset()
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	if d.key != nil {
		person = hmac.New(sha256.New, d.key)
	}
	var sum, in []byte
	for i := range len(b.rowAt) - 1 {
		out := b.out[i*d.width : (i+1)*d.width]
		row.Reset()
		row.Write(b.buf[b.rowAt[i]:b.idAt[i]])
		sum = row.Sum(sum[:0])
		copy(out, sum[:seriesDigestBytes])
		if person != nil {
			in = append(append(in[:0], seriesPersonPrefix...), b.buf[b.idAt[i]:b.rowAt[i+1]]...)
			person.Reset()
			person.Write(in)
			sum = person.Sum(sum[:0])
			copy(out[seriesDigestBytes:], sum[:seriesDigestBytes])
		}
	}
}

// wait hashes what is left and waits for every batch.
func (d *seriesDigester) wait() {
	d.flush()
	d.wg.Wait()
}

// entry is row n's entry; only after wait.
func (d *seriesDigester) entry(n int) []byte {
	c, i := n/digestBatchRows, n%digestBatchRows
	return d.chunks[c][i*d.width : (i+1)*d.width]
}
