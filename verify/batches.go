package verify

import (
	"context"
	"io"
	"sync"

	"sanitizer/internal/safe"
)

// The verifier's decoders (Parquet, Arrow IPC) turn a file's records into text on a
// goroutine of their own, ahead of the reader, and hand them over in batches.

// textBatchRecords is the number of records a decoder hands over at a time.
const textBatchRecords = 4096

// textBatch is a run of records, flat.
type textBatch struct {
	fields []string // n × width
	nulls  []bool   // nil when no field is null, else like fields
	spare  []bool   // an earlier nulls, for reuse
	n      int
}

// takeBatch returns a batch of n records of width fields, a recycled one if free has
// one.
func takeBatch(free chan *textBatch, n, width int) *textBatch {
	var b *textBatch
	select {
	case b = <-free:
	default:
		b = &textBatch{}
	}
	if cap(b.fields) < n*width {
		b.fields = make([]string, n*width)
	}
	if b.nulls != nil {
		b.spare = b.nulls
	}
	b.fields, b.nulls, b.n = b.fields[:n*width], nil, n
	return b
}

// setNull marks field k of b null.
func (b *textBatch) setNull(k int) {
	if b.nulls == nil {
		if cap(b.spare) >= len(b.fields) {
			b.nulls = b.spare[:len(b.fields)]
			clear(b.nulls)
		} else {
			b.nulls = make([]bool, len(b.fields))
		}
	}
	b.nulls[k] = true
	b.fields[k] = ""
}

// batchReader reads, record by record (a Reader), the batches of width fields that a
// decoder's produce sends on a goroutine of its own, which Close stops.
type batchReader struct {
	width  int
	cancel context.CancelFunc
	out    chan *textBatch
	free   chan *textBatch
	done   <-chan error
	close  sync.Once
	err    error // what Read returns once the batches are over
	ended  bool  // the producer's result has been taken
	cur    *textBatch
	i      int
}

// producer sends batches to out, taking them from free when it has some, until its
// records are over (nil), it fails, or ctx is cancelled (ctx.Err()).
type producer func(ctx context.Context, out chan<- *textBatch, free chan *textBatch) error

// start starts produce on a goroutine of its own.
func (r *batchReader) start(ctx context.Context, width int, produce producer) {
	ctx, cancel := context.WithCancel(ctx)
	r.width, r.cancel = width, cancel
	r.out, r.free = make(chan *textBatch, 2), make(chan *textBatch, 4)
	r.done = safe.Start(func() error {
		defer close(r.out)
		return produce(ctx, r.out, r.free)
	})
}

// Read returns the next record (valid until the next call), or io.EOF after the last.
func (r *batchReader) Read() ([]string, error) {
	for r.cur == nil || r.i >= r.cur.n {
		if r.cur != nil {
			select { // for the decoder to fill again
			case r.free <- r.cur:
			default:
			}
			r.cur = nil
		}
		if r.ended {
			return nil, r.err
		}
		b, ok := <-r.out
		if !ok {
			r.ended = true
			if r.err = <-r.done; r.err == nil {
				r.err = io.EOF
			}
			return nil, r.err
		}
		r.cur, r.i = b, 0
	}
	w := r.width
	rec := r.cur.fields[r.i*w : (r.i+1)*w : (r.i+1)*w]
	r.i++
	return rec, nil
}

// Nulls reports which fields of the record Read returned last are null (they read as
// ""); nil when none is.
func (r *batchReader) Nulls() []bool {
	if r.cur == nil || r.cur.nulls == nil || r.i == 0 {
		return nil
	}
	w := r.width
	return r.cur.nulls[(r.i-1)*w : r.i*w : r.i*w]
}

// Close stops the decoder and waits for it.
func (r *batchReader) Close() {
	r.close.Do(func() {
		r.cancel()
		for range r.out {
		}
		if !r.ended {
			r.ended, r.err = true, <-r.done
			if r.err == nil {
				r.err = io.EOF
			}
		}
	})
}
