package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
	"sanitizer/internal/safe"
)

// TestOwnPanicIsInternal: a panic of the verifier's own code while it reads a Parquet
// or Arrow IPC file is an internal error with its stack, not the file's fault (a
// corrupt file's panics, raised in the libraries, are bad input:
// TestArrowEveryByteCorrupt). The defect here: a DictionaryUse not made by
// NewDictionaryUse, whose map is nil, told of the files' dictionaries.
func TestOwnPanicIsInternal(t *testing.T) {
	mem := memory.NewGoAllocator()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	specs := []arrowSpec{
		{name: "d", typ: dictType, val: func(i int) any { return i % 2 }, dict: func(int) []any { return []any{"a", "b"} }},
		{name: "n", typ: arrow.PrimitiveTypes.Int32, val: func(i int) any { return int32(i) }},
	}
	sc, recs := arrowBatches(t, mem, specs, 4)
	defer recs[0].Release()
	files := map[string]opening{
		"parquet": parquetRecords(dictionaryParquet(t, []string{"a", "b"}, []int{0, 1, 1, 0}, 4)),
	}
	for _, format := range arrowFormats {
		path := writeArrowFile(t, "d.arrow", writeArrowIPC(t, mem, format.stream, sc, recs))
		files[format.name] = arrowRecords(path, format.stream)
	}
	for name, open := range files {
		t.Run(name, func(t *testing.T) {
			err := readFile(open, &DictionaryUse{})
			var pe *safe.PanicError
			if !errors.Is(err, fault.ErrInternal) || errors.Is(err, fault.ErrBadInput) || !errors.As(err, &pe) {
				t.Fatalf("got %v, want an internal error", err)
			}
			if !strings.Contains(string(pe.Stack), "DictionaryUse") {
				t.Errorf("the stack does not say where: %s", pe.Stack)
			}
		})
	}
}
