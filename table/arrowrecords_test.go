package table

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
	"sanitizer/internal/safe"
)

// TestOwnPanicIsInternal: a panic of this program's code while a Parquet or Arrow IPC
// source reads is an internal error with its stack, not the file's fault (a corrupt
// file's panics, raised in the Arrow library, are bad input: TestArrowCorruptBytes).
// The defect here: a column that claims keys (Column.KeyText) its arrays do not have,
// so that arrowKeys panics.
func TestOwnPanicIsInternal(t *testing.T) {
	pq := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, pq, typedCols, typedRecs, nil)
	open := map[string]func() (Source, error){
		"parquet": func() (Source, error) {
			s, err := openParquet(pq)
			if s != nil {
				s.viaArrow = true // through pqarrow's arrays, as keys are read from them
			}
			return s, err
		},
	}
	cols, rows := arrowRoundTripTable(10)
	for _, format := range arrowFormats {
		path := writeArrowTable(t, memory.DefaultAllocator, format.stream, cols, nil, rows, 4)
		open["arrow "+format.name] = func() (Source, error) { return openArrow(path, format.stream) }
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			src, err := open()
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if src.Columns()[0].Name != "s" || src.Columns()[0].KeyText != nil {
				t.Fatalf("column 0: %+v, want the string column s, without keys", src.Columns()[0])
			}
			src.Columns()[0].KeyText = FormatInt
			out := make(chan *Batch, 2)
			errc := make(chan error, 1)
			go func() { errc <- StreamAs(context.Background(), src, []int{0}, []Form{AsKey}, out) }()
			for b := range out {
				b.Release()
			}
			err = <-errc
			var pe *safe.PanicError
			if !errors.Is(err, fault.ErrInternal) || errors.Is(err, fault.ErrBadInput) || !errors.As(err, &pe) {
				t.Fatalf("got %v, want an internal error", err)
			}
			if !strings.Contains(string(pe.Stack), "arrowKeys") {
				t.Errorf("the stack does not say where: %s", pe.Stack)
			}
		})
	}
}
