package table

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/sample"
	"sanitizer/schema"
)

// streamAll reads every record of src projected to cols, and the stream's error.
func streamAll(src Source, cols []int) ([][]string, error) {
	out := make(chan *Batch, 1)
	errc := make(chan error, 1)
	go func() { errc <- src.Stream(context.Background(), cols, out) }()
	var recs [][]string
	for b := range out {
		for i := range b.N {
			recs = append(recs, slices.Clone(b.Record(i)))
		}
	}
	return recs, <-errc
}

// headerAndRecords reads the header and every record of a CSV source, and closes it.
func headerAndRecords(src *csvSource) ([][]string, error) {
	defer src.Close()
	cols := make([]int, len(src.header))
	for i := range cols {
		cols[i] = i
	}
	recs, err := streamAll(src, cols)
	return append([][]string{src.header}, recs...), err
}

// stdlibCSV reads data as the CSV source did with encoding/csv: the records (the
// header first, when header) up to the first error, and that error's record number
// (1-based, the header not counted) and start line.
func stdlibCSV(data []byte, sep rune, width int) (recs [][]string, errRow, errLine int, err error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = sep
	r.FieldsPerRecord = width
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return recs, 0, 0, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return recs, len(recs) + 1, pe.StartLine, pe.Err
			}
			return recs, len(recs) + 1, 0, err
		}
		recs = append(recs, slices.Clone(rec))
	}
}

// csvCases are inputs whose every rule of the format the parser must read as
// encoding/csv does.
var csvCases = []struct {
	name string
	data string
}{
	{"plain", "a,b\n1,2\n3,4\n"},
	{"no final line end", "a,b\n1,2\n3,4"},
	{"crlf", "a,b\r\n1,2\r\n3,4\r\n"},
	{"lone cr is data", "a,b\n1\r2,3\n"},
	{"last cr dropped", "a,b\n1,2\r"},
	{"two crs at end", "a,b\n1,2\r\r"},
	{"empty lines", "\n\na,b\n\n1,2\r\n\r\n3,4\n\n"},
	{"empty fields", "a,b\n,\n\"\",\n,\"\"\n"},
	{"quoted", "a,b\n\"x,y\",\"z\"\"q\"\n"},
	{"quoted multiline", "a,b\n\"line1\nline2\",\"r\r\nn\"\n5,6\n"},
	{"quoted then crlf", "a,b\n\"x\"\r\n\"y\",\"z\"\r\n"},
	{"quoted at eof", "a,b\n1,\"2\""},
	{"quoted cr at eof", "a,b\n1,\"2\"\r"},
	{"quoted holds cr", "a,b\n\"x\r\",y\n"},
	{"empty quoted last", "a,b\n1,\"\"\n"},
	{"bare quote", "a,b\n1,2\nx\"y,3\n"},
	{"bare quote after quoted", "a,b\n\"1\",2\"\n"},
	{"extraneous quote", "a,b\n\"1\"x,2\n"},
	{"quote then cr x", "a,b\n\"1\"\rx,2\n"},
	{"unterminated", "a,b\n1,2\n\"3,4\n5,6\n"},
	{"too many fields", "a,b\n1,2\n3,4,5\n"},
	{"too few fields", "a,b\n1,2\n3\n"},
	{"error line after multiline", "a,b\n\"1\n2\n3\",4\n5\n"},
	{"header only", "a,b\n"},
	{"bad header after empty lines", "\n\r\n\"a,b\n"},
	{"bad record after empty lines", "a,b\n\n\n1,\"2\n"},
	{"bare quote after empty lines", "\n\na,b\n\r\n1\",2\n"},
	{"blank only", "\n\r\n"},
	{"empty", ""},
	{"bom", "\xEF\xBB\xBFa,b\n1,2\n"},
	{"one column empty", "c\n\"\"\nx\n\"\"\n"},
	{"trailing separator", "a,b\n1,\n"},
	{"quoted separator at end", "a,b\n\"1\",\n"},
}

// TestCSVMatchesStdlib: the block parser reads every case as encoding/csv does, with
// several separators, and with blocks of one byte up (the splitter cuts the input at
// every record boundary it can).
func TestCSVMatchesStdlib(t *testing.T) {
	for _, c := range csvCases {
		for _, sep := range []rune{',', ';', '\t', '§'} {
			data := strings.ReplaceAll(c.data, ",", string(sep))
			for _, block := range []int{1, 2, 3, 5, 8, 13, csvBlockBytes} {
				t.Run(fmt.Sprintf("%s/%c/%d", c.name, sep, block), func(t *testing.T) { compareCSV(t, []byte(data), sep, block) })
			}
		}
	}
}

// compareCSV checks the CSV source against encoding/csv on data, with a header row
// and without.
func compareCSV(t *testing.T, data []byte, sep rune, block int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, header := range []bool{true, false} {
		width := 0
		if !header {
			width = 2
		}
		want, row, line, werr := stdlibCSV(data, sep, width)
		src, err := openCSVBlocks(path, schema.CSV{Separator: sep, Header: header}, []string{"a", "b"}, block)
		var got [][]string
		if err == nil {
			got, err = headerAndRecords(src)
			if !header {
				got = got[1:]
			}
		}
		if header && len(want) == 0 && werr == nil {
			// encoding/csv finds no header: the source says so.
			if err == nil || !strings.Contains(err.Error(), "no header row") {
				t.Fatalf("header %v: an empty file read as %q, %v", header, got, err)
			}
			continue
		}
		if header && len(want) > 0 && badHeader(want[0]) {
			if err == nil || !strings.Contains(err.Error(), ": header: column") {
				t.Fatalf("the header %q read as %q, %v", want[0], got, err)
			}
			continue
		}
		if werr != nil {
			if header {
				row-- // the source counts records after the header
				if row == 0 {
					row = 1
				}
			}
			wantMsg := werr.Error()
			if err == nil || !strings.Contains(err.Error(), wantMsg) || (line > 0 && !strings.Contains(err.Error(), "line "+strconv.Itoa(line)+")")) || !strings.Contains(err.Error(), "row "+strconv.Itoa(row)+" ") {
				t.Fatalf("header %v: error %v; encoding/csv: %v at row %d, line %d", header, err, werr, row, line)
			}
			if len(got) > len(want) || !slices.EqualFunc(got, want[:len(got)], slices.Equal) {
				t.Fatalf("header %v: before the error read %q, encoding/csv %q", header, got, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("header %v: %v; encoding/csv read %q", header, err, want)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("header %v: read %q, encoding/csv %q", header, got, want)
		}
	}
}

// badHeader reports whether a header has an empty or a repeated name.
func badHeader(h []string) bool {
	for i, name := range h {
		if name == "" || slices.Contains(h[:i], name) {
			return true
		}
	}
	return false
}

// FuzzCSVMatchesStdlib: on any input, with any of several separators and block sizes,
// the CSV source reads what encoding/csv reads, and fails at the same record and line.
func FuzzCSVMatchesStdlib(f *testing.F) {
	for _, c := range csvCases {
		f.Add([]byte(c.data), uint8(0), uint8(3))
	}
	seps := []rune{',', ';', '\t', '§', 'a'}
	f.Fuzz(func(t *testing.T, data []byte, sep, block uint8) {
		compareCSV(t, data, seps[int(sep)%len(seps)], 1+int(block)%64)
	})
}

// BenchmarkCSVSource reads every field of a generated CSV table (CSV_ROWS records,
// default 200,000) with the CSV source (blocks parsed on GOMAXPROCS goroutines) and,
// for comparison, with encoding/csv on one goroutine into batches, as the source did
// before.
func BenchmarkCSVSource(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("CSV_ROWS")); err == nil {
		rows = v
	}
	path := filepath.Join(b.TempDir(), "in.csv")
	writeHospitalCSV(b, path, rows)
	b.Run("blocks", func(b *testing.B) {
		for b.Loop() {
			src, err := OpenCSV(path, schema.CSV{Separator: ',', Header: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			cols := make([]int, len(src.header))
			for i := range cols {
				cols[i] = i
			}
			out := make(chan *Batch, 4)
			errc := make(chan error, 1)
			go func() { errc <- src.Stream(context.Background(), cols, out) }()
			n := 0
			for bt := range out {
				n += bt.N
			}
			if err := <-errc; err != nil || n != rows {
				b.Fatalf("%d records, %v", n, err)
			}
			src.Close()
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("encoding-csv", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			// As the source did: records copied into batches sent to a consumer.
			r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
			r.ReuseRecord = true
			out := make(chan *Batch, 4)
			done := make(chan int)
			go func() {
				n := 0
				for bt := range out {
					n += bt.N
				}
				done <- n
			}()
			r.Read() // the header
			bt := NewBatch(0, 0)
			for {
				rec, err := r.Read()
				if err != nil {
					break
				}
				bt.Fields = append(bt.Fields, rec...)
				if bt.N++; bt.N == BatchRows {
					out <- bt
					bt = NewBatch(0, len(rec))
				}
			}
			out <- bt
			close(out)
			n := <-done
			f.Close()
			if n != rows {
				b.Fatalf("%d records", n)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}

// FuzzCSVFieldMatchesStdlib: a record of fields is written as encoding/csv's Writer
// writes it, with several separators.
func FuzzCSVFieldMatchesStdlib(f *testing.F) {
	for _, s := range []string{"", "a", " a", "\ta", "a b", `\.`, `"`, `a"b`, "a\nb", "a\r\nb", "\r", ",", ";", "§", "\u00a0x", "\u2028", "é,"} {
		f.Add(s, "x", uint8(0))
	}
	seps := []rune{',', ';', '\t', '§', 'a', ' '}
	f.Fuzz(func(t *testing.T, a, b string, sep uint8) {
		comma := seps[int(sep)%len(seps)]
		for _, rec := range [][]string{{a}, {a, b}, {b, a, ""}} {
			var want bytes.Buffer
			w := csv.NewWriter(&want)
			w.Comma = comma
			if len(rec) == 1 && rec[0] == "" {
				want.WriteString(`""` + "\n") // the sink's one exception
			} else if err := w.Write(rec); err != nil {
				t.Skip(err)
			}
			w.Flush()
			s := &csvSink{comma: comma}
			if got := s.appendRecord(nil, rec); string(got) != want.String() {
				t.Fatalf("%q with %q: wrote %q, encoding/csv %q", rec, comma, got, want.String())
			}
		}
	})
}

// writeHospitalCSV writes rows records of the synthetic hospital sample, with a header,
// to a CSV file at path.
func writeHospitalCSV(tb testing.TB, path string, rows int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	if err := w.Write(sample.HospitalColumns); err != nil {
		tb.Fatal(err)
	}
	g := sample.NewHospitalGen(1)
	rec := make([]string, len(sample.HospitalColumns))
	for range rows {
		rec = g.Next(rec)
		if err := w.Write(rec); err != nil {
			tb.Fatal(err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		tb.Fatal(err)
	}
}

// TestRewindChecksum: a change anywhere in the file between passes changes the pass
// checksum that Release compares.
func TestRewindChecksum(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("a,b\n1,x\n2,y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := OpenCSV(in, schema.CSV{Separator: ',', Header: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	drain := func() {
		if _, err := streamAll(src, []int{0, 1}); err != nil {
			t.Fatal(err)
		}
	}
	drain()
	if err := os.WriteFile(in, []byte("a,b\n1,x\n2,z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := src.Rewind(); err != nil {
		t.Fatal(err)
	}
	drain()
	if err := src.Unchanged(); err == nil {
		t.Fatalf("checksum %x/%x, rows %d/%d: the change went unnoticed", src.sum.Sum32(), src.pass1, src.read, src.rows1)
	}
}

// TestSinkEmptySingleField: a one-column record holding "" survives the round trip.
func TestSinkEmptySingleField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newCSVSink(f, schema.CSV{Separator: ','}, []OutColumn{{Name: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]string{"c", "", "x", ""}, nil, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src, err := OpenCSV(path, schema.CSV{Separator: ',', Header: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	recs, err := streamAll(src, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		got = append(got, rec[0])
	}
	if strings.Join(got, "|") != "|x|" {
		t.Fatalf("read back %q", got)
	}
}

// TestSinkPreparedInOrder: prepared batches, small (through the buffer) and large
// (straight to the file), are written in the order given, after the header.
func TestSinkPreparedInOrder(t *testing.T) {
	var buf bytes.Buffer
	s, err := newCSVSink(&buf, schema.CSV{Separator: ',', Header: true}, []OutColumn{{Name: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("c\n")
	for i, n := range []int{3, 200_000, 5, 7, 150_000, 1} { // records of "x0".."x9": 3 bytes each
		fields := make([]string, n)
		for j := range fields {
			fields[j] = "x" + strconv.Itoa((i+j)%10)
			want.WriteString(fields[j] + "\n")
		}
		p, err := s.Prepare(&Rows{Fields: fields, N: n})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WritePrepared(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != want.String() {
		t.Fatalf("%d bytes written, want %d in that order", buf.Len(), want.Len())
	}
}
