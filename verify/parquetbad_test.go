package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"sanitizer/fault"
)

// readParquetFile opens path with the verifier's decoder and reads every column it can
// read, as a user's file would be read: it returns the records read and the first
// error.
func readParquetFile(path string) (n int, err error) {
	f, err := OpenParquet(path)
	if err != nil {
		return 0, err
	}
	return readAllColumns(f)
}

// readAllColumns reads every column of f it can read, and closes f.
func readAllColumns(f *ParquetFile) (n int, err error) {
	defer f.Close()
	if f.NumRows() > 1<<20 {
		return 0, nil // a footer may promise any count; reading it all proves nothing more
	}
	var cols []int
	for i, c := range f.Columns() {
		if c.Unsupported == "" {
			cols = append(cols, i)
		}
	}
	r, err := f.Records(context.Background(), cols)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	for {
		if _, err := r.Read(); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return n, err
		}
		n++
	}
}

// checkBadFileError fails unless err is a bad-input error that names path.
func checkBadFileError(t *testing.T, path string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q is not bad input naming %s", err, path)
	}
}

// goodParquet is a small file of every type the decoder reads, written with parquet-go
// (options: the writer's).
func goodParquet(t testing.TB, rows int, options ...parquet.WriterOption) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "good.parquet")
	writePQ(t, path, pqRows(rows), options...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParquetBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := goodParquet(t, 40, parquet.PageBufferSize(256))
	footer := func(data []byte, n uint32) []byte {
		out := slices.Clone(data)
		binary.LittleEndian.PutUint32(out[len(out)-8:], n)
		return out
	}
	cases := map[string][]byte{
		"empty":                nil,
		"garbage":              []byte("this is not a parquet file at all, not even close"),
		"magic only":           []byte("PAR1PAR1"),
		"empty footer":         []byte("PAR1\x00\x00\x00\x00PAR1"),
		"footer past the file": footer(good, 1<<31),
		"footer of the file":   footer(good, uint32(len(good)-8)),
		"encrypted":            append([]byte("PARE"), good[4:]...),
	}
	for _, cut := range []int{len(good) - 1, len(good) - 8, len(good) / 2, 100, 12, 4} {
		cases["truncated at "+signedText(uint64(cut))] = good[:cut]
	}
	flipped := slices.Clone(good)
	for i := 8; i < len(flipped)/2; i += 7 {
		flipped[i] ^= 0x5a
	}
	cases["corrupt pages"] = flipped
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".parquet")
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readParquetFile(path)
			if err == nil {
				t.Fatal("no error")
			}
			checkBadFileError(t, path, err)
		})
	}
}

// exhaustive says that the corruption sweeps change every byte (make test-exhaustive,
// which CI runs), not a sample of them (make test).
var exhaustive = os.Getenv("SANITIZE_EXHAUSTIVE") != ""

// TestParquetEveryByteCorrupt changes each byte of small files in turn (every fifth
// but with SANITIZE_EXHAUSTIVE): every reading ends in records or an error naming the
// file, never a panic.
func TestParquetEveryByteCorrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("reads thousands of files")
	}
	step := 5
	if exhaustive {
		step = 1
	}
	files := map[string][]byte{
		"v2 snappy": goodParquet(t, 12, parquet.PageBufferSize(128), parquet.Compression(&parquet.Snappy)),
		"v1 plain":  goodParquet(t, 12, parquet.DataPageVersion(1), parquet.PageBufferSize(128)),
		"lz4":       goodParquet(t, 12, parquet.Compression(&parquet.Lz4Raw)),
	}
	for name, good := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.parquet")
			for i := 0; i < len(good); i += step {
				bad := slices.Clone(good)
				bad[i] ^= 0xff
				if err := os.WriteFile(path, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := readParquetFile(path)
				checkBadFileError(t, path, err)
			}
		})
	}
}

func TestCheckHybrid(t *testing.T) {
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cases := []struct {
		name  string
		runs  []byte
		width int
		limit int
		ok    bool
	}{
		{"one run", append(uv(10<<1), 1), 1, 10, true},
		{"a run past the limit", append(uv(11<<1), 1), 1, 10, false},
		{"a huge run", append(uv((1<<31-1)<<1), 0), 1, 1000, false},
		{"runs adding past the limit", slices.Concat(uv(6<<1), []byte{1}, uv(6<<1), []byte{0}), 1, 10, false},
		{"bit-packed groups", append(uv(2<<1|1), 0xff, 0x00), 1, 16, true},
		// Its values are in the bytes (DuckDB pads the last run past a group of 8).
		{"bit-packed past the limit", append(uv(2<<1|1), 0xff, 0x00), 1, 15, true},
		{"a repeated run after bit-packed groups", slices.Concat(uv(2<<1|1), []byte{0xff, 0x00}, uv(11<<1), []byte{1}), 1, 10, false},
		{"bit-packed past the end", append(uv(3<<1|1), 0xff, 0x00), 1, 100, false},
		{"a malformed header", []byte{0x80}, 1, 100, false},
	}
	for _, tc := range cases {
		if err := checkHybrid(tc.runs, tc.width, tc.limit); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestLZ4Block(t *testing.T) {
	// "abcabcabcabc": 3 literals, then a match of 9 at offset 3.
	block := []byte{0x35, 'a', 'b', 'c', 3, 0, 0x10, 'x'}
	cases := []struct {
		name  string
		block []byte
		limit int
		want  string
	}{
		{"a block", block, 100, "abcabcabcabcx"},
		{"exactly the limit", block, 13, "abcabcabcabcx"},
		{"past the limit", block, 12, ""},
		{"an offset before the start", []byte{0x10, 'a', 5, 0, 0x10, 'x'}, 100, ""},
		{"a zero offset", []byte{0x10, 'a', 0, 0, 0x10, 'x'}, 100, ""},
		{"literals past the end", []byte{0x50, 'a'}, 100, ""},
		{"an endless length", []byte{0xf0, 255, 255}, 100, ""},
	}
	for _, tc := range cases {
		got, err := lz4Block(make([]byte, 0, tc.limit), tc.block)
		if (err == nil) != (tc.want != "") || string(got) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestZstdContentSize(t *testing.T) {
	frame := func(fhd byte, rest ...byte) []byte {
		return append([]byte{0x28, 0xb5, 0x2f, 0xfd, fhd}, rest...)
	}
	cases := []struct {
		name  string
		frame []byte
		size  uint64
		ok    bool
		bad   bool
	}{
		{"single segment, 1 byte", frame(0x20, 200), 200, true, false},
		{"2 bytes", frame(0x40, 0 /* window */, 0x10, 0x00), 16 + 256, true, false},
		{"4 bytes", frame(0x80, 0, 1, 0, 0, 0), 1, true, false},
		{"8 bytes, single segment", frame(0xe0, 0, 0, 0, 0, 1, 0, 0, 0), 1 << 32, true, false},
		{"none", frame(0x00, 0), 0, false, false},
		{"truncated", frame(0x80, 0, 1), 0, false, true},
		{"not a frame", []byte("hello"), 0, false, true},
	}
	for _, tc := range cases {
		size, ok, err := zstdContentSize(tc.frame)
		if size != tc.size || ok != tc.ok || (err != nil) != tc.bad {
			t.Errorf("%s: %d, %v, %v", tc.name, size, ok, err)
		}
	}
}

func TestCheckFileMetaData(t *testing.T) {
	cases := []struct {
		name   string
		footer []byte
		ok     bool
	}{
		{"empty struct", []byte{0}, true},
		{"a list longer than the footer", []byte{0x29, 0xfc, 0xff, 0xff, 0xff, 0x07, 0}, false},
		{"a string longer than the footer", []byte{0x68, 0xff, 0xff, 0x03, 'a', 0}, false},
		{"nested too deep", append(bytes.Repeat([]byte{0x1c}, 100), 0), false},
		{"an unknown type", []byte{0x1e, 0}, false},
		{"a map", []byte{0x1b, 1, 0x88, 1, 'a', 1, 'b', 0}, true},
		{"truncated", []byte{0x15}, false},
	}
	for _, tc := range cases {
		if err := checkFileMetaData(tc.footer); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestCheckSchemaDepth(t *testing.T) {
	chain := func(n int) []int32 {
		c := make([]int32, n+1)
		for i := range n {
			c[i] = 1
		}
		return c
	}
	if err := checkSchemaDepth(chain(maxSchemaDepth)); err != nil {
		t.Errorf("a schema %d deep: %v", maxSchemaDepth, err)
	}
	if err := checkSchemaDepth(chain(maxSchemaDepth + 1)); err == nil {
		t.Errorf("a schema %d deep: no error", maxSchemaDepth+1)
	}
	if err := checkSchemaDepth([]int32{3, 0, 2, 0, 0, 0}); err != nil {
		t.Errorf("a flat schema: %v", err)
	}
}

func TestFloat16(t *testing.T) {
	cases := []struct {
		bits uint16
		want string
	}{
		{0x0000, "0"}, {0x8000, "-0"}, {0x3c00, "1"}, {0xc000, "-2"}, {0x7bff, "65504"},
		{0x0400, "6.1035156e-05"}, {0x0001, "5.9604645e-08"}, {0x03ff, "6.097555e-05"},
		{0x7c00, "+Inf"}, {0xfc00, "-Inf"}, {0x7e00, "NaN"}, {0x2e66, "0.099975586"},
	}
	for _, tc := range cases {
		if got := float16Text(uint64(tc.bits)); got != tc.want {
			t.Errorf("0x%04x: %q, want %q", tc.bits, got, tc.want)
		}
	}
}

func TestInt96Nanos(t *testing.T) {
	at := func(day uint32, nanos uint64) []byte {
		b := binary.LittleEndian.AppendUint64(nil, nanos)
		return binary.LittleEndian.AppendUint32(b, day)
	}
	const epoch = 2440588
	cases := []struct {
		name string
		b    []byte
		ns   int64
		ok   bool
	}{
		{"the epoch", at(epoch, 0), 0, true},
		{"a day later, one ns", at(epoch+1, 1), 86400e9 + 1, true},
		{"a ns before the epoch", at(epoch-1, 86400e9-1), -1, true},
		{"the last int64", at(epoch+106751, 86400e9-(106752*86400e9-9223372036854775807)), 9223372036854775807, true},
		{"past the last", at(epoch+106752, 0), 0, false},
		{"the first int64", at(epoch-106752, 763145224192), -9223372036854775808, true},
		{"before the first", at(epoch-106752, 763145224191), 0, false},
		{"nanoseconds past a day", at(epoch, 86400e9), 0, false},
	}
	for _, tc := range cases {
		ns, ok := int96Nanos(tc.b)
		if ns != tc.ns || ok != tc.ok {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, ns, ok, tc.ns, tc.ok)
		}
	}
}

// FuzzVerifyParquet feeds arbitrary bytes to the verifier's Parquet decoder: it must
// return records or an error naming the file, never panic, hang or allocate without
// bound.
func FuzzVerifyParquet(f *testing.F) {
	seeds := [][]byte{
		goodParquet(f, 30, parquet.PageBufferSize(256)),
		goodParquet(f, 30, parquet.DataPageVersion(1), parquet.Compression(&parquet.Gzip), parquet.PageBufferSize(256)),
		goodParquet(f, 30, parquet.Compression(&parquet.Zstd)),
		goodParquet(f, 30, parquet.Compression(&parquet.Lz4Raw), parquet.MaxRowsPerRowGroup(10)),
		goodParquet(f, 30, parquet.Compression(&parquet.Uncompressed)),
	}
	for _, s := range seeds {
		f.Add(s)
		f.Add(s[:len(s)/2])
		f.Add(s[:len(s)-9])
	}
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, content []byte) {
		// In memory: the decoder reads the same way, many times faster.
		const path = "fuzz.parquet"
		pf, err := openParquet(path, bytes.NewReader(content), int64(len(content)), io.NopCloser(nil))
		if err == nil {
			// Chunks read a few bytes at a time (the inputs are smaller than a
			// block): every page is read in pieces, its header again and again.
			pf.readBlock = 1 + len(content)%61
			_, err = readAllColumns(pf)
		}
		checkBadFileError(t, path, err)
	})
}
