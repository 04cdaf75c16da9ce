package pipeline

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"sanitizer/sample"
	"sanitizer/schema"
)

// Generate writes the synthetic hospital sample of rows records, seeded by seed, to
// path (CSV), atomically: the file appears complete or not at all.
func Generate(path string, rows int, seed uint64) error {
	if rows < 0 {
		return schema.BadInput("--rows: must not be negative")
	}
	if f := tableFormat(schema.IO{}, path); f != "csv" {
		return schema.BadInput("--out: %s: only .csv is supported by this version", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := sample.Hospital(w, rows, seed); err != nil {
		tmp.Close()
		return fmt.Errorf("gen: %w", err)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("gen: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("gen: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
