package table

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"sanitizer/fault"
	"sanitizer/internal/safe"
)

// The Parquet and Arrow IPC sources both read with the Arrow project's libraries,
// which trust what a file states and may panic on a corrupt one.

// arrowLibrary is the import path of the Arrow project's Go libraries (its Parquet and
// IPC readers).
const arrowLibrary = "github.com/apache/arrow-go/"

// readPanic is the error for a panic r that a deferred function recovered while the
// Arrow library read a file (call it from that function). The file is to blame when
// the library raised it, or when the reader's allocator refused a buffer the file asked
// for (errBufferTooLarge): then it is bad input, as corrupt makes it of the panic's
// value. Any other panic is a defect of this program: an internal error with its stack
// (safe.PanicError).
func readPanic(r any, corrupt func(error) error) error {
	if e, ok := r.(errBufferTooLarge); ok {
		return corrupt(e)
	}
	if safe.RaisedIn(arrowLibrary) {
		return corrupt(fmt.Errorf("%v", r))
	}
	return safe.Recovered(r)
}

// guardStream runs stream, the body of a file source's StreamAs, and closes out once it
// ends. stream keeps the name of the column it reads in *col ("" between columns): a
// panic the Arrow library raises is bad input naming the file and that column
// (corrupt), any other an internal error (readPanic).
func guardStream(out chan<- *Batch, corrupt func(col string, err error) error, stream func(col *string) error) (err error) {
	defer close(out)
	col := ""
	return guardColumn(corrupt, &col, func() error { return stream(&col) })
}

// guardColumn runs f, which keeps the name of the column it reads in *col: a panic
// the Arrow library raises is bad input naming the file and that column (corrupt), any
// other an internal error (readPanic).
func guardColumn(corrupt func(col string, err error) error, col *string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = readPanic(r, func(cause error) error { return corrupt(*col, cause) })
		}
	}()
	return f()
}

// sendBatch sends b to out, or releases it when ctx is cancelled first.
func sendBatch(ctx context.Context, out chan<- *Batch, b *Batch) error {
	select {
	case out <- b:
		return nil
	case <-ctx.Done():
		b.Release()
		return ctx.Err()
	}
}

// columnForm is how a projected column of Arrow records goes into a batch.
type columnForm uint8

const (
	formText    columnForm = iota // canonical text (arrowText)
	formKeys                      // keys (arrowKeys; Column.KeyText)
	formIndexes                   // dictionary indexes (dictionaryIndexes; Parquet strings)
	formArray                     // slices of the records' arrays
)

// recordBatcher puts the projected columns of Arrow records into batches, each column
// in its form, and sends the batches: what the Parquet and Arrow IPC sources' StreamAs
// share once their library has decoded a record.
type recordBatcher struct {
	ctx     context.Context
	out     chan<- *Batch
	corrupt func(col string, err error) error
	col     *string // the name of the column being converted ("" none), for a panic's message
	names   []string
	forms   []columnForm
	// exact: each record's arrays hold exactly its records (Parquet's record reader),
	// not at least (an IPC record batch)
	exact  bool
	arrs   []arrow.Array              // the current record's projected columns
	conv   []func(int) (string, bool) // the text of the current record's text columns
	caches []*textCache               // per text column, its recent texts (made by take)
	pend   [][]arrow.Array            // per array column, the batch's slices so far
}

// newRecordBatcher checks that the projected columns cols of a source's columns (all,
// of the file at path) can be read in the forms as gives (AsText where as has none),
// and returns their batcher: a column asked for as keys goes as keys when it has them
// (Column.KeyText), else as text.
func newRecordBatcher(ctx context.Context, out chan<- *Batch, path string, all []Column, cols []int, as []Form, col *string, corrupt func(string, error) error) (*recordBatcher, error) {
	width := len(cols)
	bt := &recordBatcher{ctx: ctx, out: out, corrupt: corrupt, col: col, names: make([]string, width), forms: make([]columnForm, width),
		arrs: make([]arrow.Array, width), conv: make([]func(int) (string, bool), width), caches: make([]*textCache, width), pend: make([][]arrow.Array, width)}
	for j, c := range cols {
		if c < 0 || c >= len(all) {
			return nil, fmt.Errorf("%s: column index %d out of range", path, c)
		}
		if err := readable(path, all[c], formOf(as, j) == AsArray); err != nil {
			return nil, err
		}
		bt.names[j] = all[c].Name
		switch {
		case formOf(as, j) == AsKey && all[c].KeyText != nil:
			bt.forms[j] = formKeys
		case formOf(as, j) == AsArray:
			bt.forms[j] = formArray
		}
	}
	return bt, nil
}

// clone is a batcher of the same columns in the same forms with its own state (the
// column it converts, its records' arrays, caches and slices), for another goroutine
// reading other records; its batches go to the same channel until its out is set.
func (bt *recordBatcher) clone(ctx context.Context) *recordBatcher {
	width := len(bt.forms)
	return &recordBatcher{ctx: ctx, out: bt.out, corrupt: bt.corrupt, col: new(string), names: bt.names, forms: bt.forms, exact: bt.exact,
		arrs: make([]arrow.Array, width), conv: make([]func(int) (string, bool), width), caches: make([]*textCache, width), pend: make([][]arrow.Array, width)}
}

// take makes the columns at[j] of rec, a record of n records, the projected columns that
// put converts next.
func (bt *recordBatcher) take(rec arrow.Record, at []int, n int) error {
	unit := "a record batch"
	if bt.exact {
		unit = "a batch"
	}
	for j, form := range bt.forms {
		*bt.col = bt.names[j]
		arr := rec.Column(at[j])
		if arr.Len() < n || bt.exact && arr.Len() != n {
			return bt.corrupt(*bt.col, fmt.Errorf("%d values in %s of %d records", arr.Len(), unit, n))
		}
		bt.arrs[j], bt.conv[j] = arr, nil
		if form == formText {
			if bt.caches[j] == nil {
				bt.caches[j] = newTextCache()
			}
			bt.conv[j] = arrowText(arr, bt.caches[j])
		}
	}
	*bt.col = ""
	return nil
}

// put adds records off … off+m−1 of the current record (take) to b.
func (bt *recordBatcher) put(b *Batch, off, m int) error {
	width := len(bt.forms)
	base := len(b.Fields)
	b.Fields = b.Fields[:base+m*width]
	for j, form := range bt.forms {
		*bt.col = bt.names[j]
		switch form {
		case formKeys:
			arrowKeys(bt.arrs[j], off, b.moreKeys(j, m), func(i int) { b.SetNull((base/width+i)*width + j) })
		case formIndexes:
			if off != 0 || base != 0 {
				return fault.Internalf("dictionary indexes of part of a record or a batch")
			}
			if err := dictionaryIndexes(bt.arrs[j], b, j, m); err != nil {
				return bt.corrupt(*bt.col, err)
			}
		case formArray:
			arr := bt.arrs[j]
			if off == 0 && m == arr.Len() {
				arr.Retain() // the whole array: no slice of it to make
			} else {
				arr = array.NewSlice(arr, int64(off), int64(off+m))
			}
			bt.pend[j] = append(bt.pend[j], arr)
		default:
			text := bt.conv[j]
			for i := range m {
				if v, null := text(off + i); null {
					b.SetNull(base + i*width + j)
				} else {
					b.Fields[base+i*width+j] = v
				}
			}
		}
	}
	*bt.col = ""
	b.N += m
	return nil
}

// send sends b, its array columns' slices joined, or releases it when the stream is
// cancelled first.
func (bt *recordBatcher) send(b *Batch) error {
	if err := joinSlices(b, bt.pend); err != nil {
		return err
	}
	return sendBatch(bt.ctx, bt.out, b)
}

// has reports whether a projected column goes in form f.
func (bt *recordBatcher) has(f columnForm) bool { return slices.Contains(bt.forms, f) }
