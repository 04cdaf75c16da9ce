package table

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// FuzzReadCSV feeds arbitrary bytes to the CSV input reader: it never panics, every
// error is bad input naming the file, and every batch record has the header's width.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"), true)
	f.Add([]byte("a,b\r\n\"x,y\",\"multi\nline\"\r\n"), true)
	f.Add([]byte("a,b\n\"unterminated,2\n"), true)
	f.Add([]byte("a,b\n1,2,3\n"), true)
	f.Add([]byte("a,a\n1,2\n"), true)
	f.Add([]byte("1;2\n3;4\n"), false)
	f.Add([]byte(""), true)
	f.Add([]byte("\xEF\xBB\xBFa,b\n1,2\n"), true)
	f.Add([]byte("\xEF\xBB\xBF\"a\",b\n1,2\n"), true)
	f.Add([]byte("\xEF\xBB\xBF1,2\n"), false)
	f.Add([]byte("\xEF\xBB"), true)
	f.Fuzz(func(t *testing.T, data []byte, header bool) {
		path := filepath.Join(t.TempDir(), "in.csv")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		src, err := OpenCSV(path, schema.CSV{Separator: ',', Header: header}, []string{"a", "b"})
		if err != nil {
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("open: %v does not match ErrBadInput", err)
			}
			return
		}
		defer src.Close()
		out := make(chan *Batch, 1)
		done := make(chan error, 1)
		cols := make([]int, len(src.Columns()))
		for i := range cols {
			cols[i] = i
		}
		go func() { done <- src.Stream(context.Background(), cols, out) }()
		rows := 0
		for b := range out {
			if b.First != rows || len(b.Fields) != b.N*len(cols) {
				t.Fatalf("batch at %d (want %d) with %d fields for %d records", b.First, rows, len(b.Fields), b.N)
			}
			rows += b.N
		}
		if err := <-done; err != nil && !errors.Is(err, fault.ErrBadInput) {
			t.Fatalf("stream: %v does not match ErrBadInput", err)
		}
	})
}
