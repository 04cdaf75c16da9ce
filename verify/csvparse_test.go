package verify

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// csvRun is how a test reads a table: the separator, a header row or names, and the
// sizes that the verifier's reading takes large (read buffer, batch, interning).
type csvRun struct {
	sep                        rune
	header                     bool
	names                      []string
	reverse                    bool // the columns projected in reverse order
	size, batch, values, bytes int  // 0: the verifier's
}

// readOwn reads data with the verifier's reading: the header, the records (projected
// to every column, or every column in reverse), and the error that ended them.
func readOwn(data []byte, run csvRun) ([]string, [][]string, error) {
	size := run.size
	if size == 0 {
		size = csvReadSize
	}
	f, err := newCSVFile("t.csv", io.NopCloser(bytes.NewReader(data)), run.sep, run.header, run.names, size)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if run.batch > 0 {
		f.batch = run.batch
	}
	if run.values > 0 {
		f.internValues, f.internBytes = run.values, run.bytes
	}
	cols := make([]int, len(f.Header()))
	for i := range cols {
		cols[i] = i
	}
	if run.reverse {
		slices.Reverse(cols)
	}
	recs, err := readRecords(f, cols)
	return f.Header(), recs, err
}

// readStd reads data as the verifier did before it had a reader of its own: with
// encoding/csv, after a byte-order mark, its errors worded as the verifier's.
func readStd(data []byte, run csvRun) ([]string, [][]string, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))))
	r.Comma = run.sep
	var header []string
	if run.header {
		h, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil, nil, errors.New("t.csv: no header row")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("t.csv: %w", err)
		}
		header = h
	} else {
		header = run.names
		r.FieldsPerRecord = len(run.names)
	}
	var recs [][]string
	for row := 1; ; row++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return header, recs, nil
		}
		if err != nil {
			return header, recs, fmt.Errorf("t.csv: record %d: %w", row, err)
		}
		if run.reverse {
			slices.Reverse(rec)
		}
		recs = append(recs, slices.Clone(rec))
	}
}

// sameAsStd fails t unless the verifier's reading and encoding/csv read data alike: the
// same header and records (of no column, none), both without an error or both with the same message (but
// for an invalid separator, which the verifier rejects before reading).
func sameAsStd(t *testing.T, data []byte, run csvRun) (header []string, recs [][]string, err error) {
	t.Helper()
	h, recs, err := readOwn(data, run)
	sh, srecs, serr := readStd(data, run)
	if !validCSVSeparator(run.sep) {
		if err == nil || serr == nil {
			t.Fatalf("separator %q: error %v, encoding/csv's %v", run.sep, err, serr)
		}
		return h, recs, err
	}
	if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() {
		t.Fatalf("%q (%+v): error %v, encoding/csv's %v", data, run, err, serr)
	}
	if !slices.Equal(h, sh) {
		t.Fatalf("%q (%+v): header %q, encoding/csv's %q", data, run, h, sh)
	}
	if len(h) == 0 { // no columns to read: no records either
		srecs = nil
	}
	if !slices.EqualFunc(recs, srecs, slices.Equal) {
		t.Fatalf("%q (%+v): records %q, encoding/csv's %q", data, run, recs, srecs)
	}
	return h, recs, err
}

func TestCSVParse(t *testing.T) {
	cases := []struct {
		name, data string
		sep        rune
		want       [][]string // the records after the header "a,b"
		err        string     // in the error, after "t.csv: "
	}{
		{"plain", "a,b\n1,2\n3,4\n", ',', [][]string{{"1", "2"}, {"3", "4"}}, ""},
		{"no last line end", "a,b\n1,2\n3,4", ',', [][]string{{"1", "2"}, {"3", "4"}}, ""},
		{"crlf", "a,b\r\n1,2\r\n3,4\r\n", ',', [][]string{{"1", "2"}, {"3", "4"}}, ""},
		{"last cr dropped", "a,b\n1,2\r", ',', [][]string{{"1", "2"}}, ""},
		{"cr alone is data", "a,b\n1\r,2\r\r\n", ',', [][]string{{"1\r", "2\r"}}, ""},
		{"empty lines", "\n\na,b\n\n1,2\r\n\r\n\n3,4\n\n", ',', [][]string{{"1", "2"}, {"3", "4"}}, ""},
		{"empty fields", "a,b\n,\n\"\",\"\"\n", ',', [][]string{{"", ""}, {"", ""}}, ""},
		{"quoted", "a,b\n\"1\",\"x,y\"\n", ',', [][]string{{"1", "x,y"}}, ""},
		{"doubled quotes", "a,b\n\"\"\"\",\"a\"\"b\"\"\"\n", ',', [][]string{{`"`, `a"b"`}}, ""},
		{"line ends in quotes", "a,b\n\"x\ny\",\"p\r\nq\r\n\"\n", ',', [][]string{{"x\ny", "p\nq\n"}}, ""},
		{"cr in quotes", "a,b\n\"x\ry\",2\n", ',', [][]string{{"x\ry", "2"}}, ""},
		{"empty lines in quotes", "a,b\n\"\n\n\",2\n", ',', [][]string{{"\n\n", "2"}}, ""},
		{"quoted last without line end", "a,b\n1,\"2\"", ',', [][]string{{"1", "2"}}, ""},
		{"quoted last with cr", "a,b\n1,\"2\"\r", ',', [][]string{{"1", "2"}}, ""},
		{"separator", "a;b\n1,2;3\n", ';', [][]string{{"1,2", "3"}}, ""},
		{"tab", "a\tb\n1 \t 2\n", '\t', [][]string{{"1 ", " 2"}}, ""},
		{"multi-byte separator", "a€b\n1€\"2€\"\n€\n", '€', [][]string{{"1", "2€"}, {"", ""}}, ""},
		{"four-byte separator", "a😀b\n1😀2\n", '😀', [][]string{{"1", "2"}}, ""},
		{"separator bytes after stray byte", "a€b\n\xe2€\xe2\x82\n", '€', [][]string{{"\xe2", "\xe2\x82"}}, ""},
		{"bom", "\xEF\xBB\xBFa,b\n1,2\n", ',', [][]string{{"1", "2"}}, ""},
		{"bom alone", "\xEF\xBB\xBF", ',', nil, "no header row"},
		{"values alike", "a,b\nxxxxxxxxXxxxxxxxx,1\nxxxxxxxxYxxxxxxxx,12\nxxxxxxxxXxxxxxxxx,21\n", ',',
			[][]string{{"xxxxxxxxXxxxxxxxx", "1"}, {"xxxxxxxxYxxxxxxxx", "12"}, {"xxxxxxxxXxxxxxxxx", "21"}}, ""},
		{"invalid utf-8", "a,b\n\xff,\"\xfe\"\n", ',', [][]string{{"\xff", "\xfe"}}, ""},

		{"bare quote", "a,b\n1,2\"3\n", ',', nil, `record 1: parse error on line 2, column 4: bare " in non-quoted-field`},
		{"bare quote after quoted", "a,b\n\"x\ny\",2\"\n", ',', nil, `record 1: record on line 2; parse error on line 3, column 5: bare " in non-quoted-field`},
		{"text after closing quote", "a,b\n\"1\"x,2\n", ',', nil, `record 1: parse error on line 2, column 3: extraneous or missing " in quoted-field`},
		{"space after closing quote", "a,b\n1,\"2\" \n", ',', nil, `record 1: parse error on line 2, column 5: extraneous or missing " in quoted-field`},
		{"unclosed quote", "a,b\n1,2\n3,\"4\n5,6\n", ',', [][]string{{"1", "2"}}, `record 2: record on line 3; parse error on line 4, column 5: extraneous or missing " in quoted-field`},
		{"unclosed at end", "a,b\n1,\"", ',', nil, `record 1: parse error on line 2, column 4: extraneous or missing " in quoted-field`},
		{"unclosed before cr at end", "a,b\n1,\"2\n\r", ',', nil, `record 1: parse error on line 2, column 6: extraneous or missing " in quoted-field`},
		{"too few", "a,b\n1,2\n3\n", ',', [][]string{{"1", "2"}}, "record 2: record on line 3: wrong number of fields"},
		{"too many", "a,b\n\n1,\"2\",3\n", ',', nil, "record 1: record on line 3: wrong number of fields"},
		{"header error", "a,\"b\n", ',', nil, `parse error on line 1, column 6: extraneous or missing " in quoted-field`},
		{"empty", "", ',', nil, "no header row"},
		{"empty lines only", "\n\r\n\n", ',', nil, "no header row"},
		{"invalid separator", "a\"b\n", '"', nil, "invalid field separator"},
		{"separator a line end", "a\nb\n", '\n', nil, "invalid field separator"},
		{"separator the replacement character", "a\ufffdb\n", utf8.RuneError, nil, "invalid field separator"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, run := range []csvRun{
				{sep: c.sep, header: true},
				{sep: c.sep, header: true, size: 1, batch: 1, values: 1, bytes: 1},
				{sep: c.sep, header: true, size: 3, batch: 2, values: 2, bytes: 2, reverse: true},
			} {
				_, recs, err := sameAsStd(t, []byte(c.data), run)
				if c.err != "" {
					if err == nil || err.Error() != "t.csv: "+c.err {
						t.Fatalf("error %v, want %q", err, c.err)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if run.reverse {
					for _, r := range recs {
						slices.Reverse(r)
					}
				}
				if !slices.EqualFunc(recs, c.want, slices.Equal) {
					t.Fatalf("records %q, want %q", recs, c.want)
				}
			}
		})
	}
}

// TestCSVNoHeader: without a header the names set the width; no names, the first
// record.
func TestCSVNoHeader(t *testing.T) {
	for _, c := range []struct {
		data  string
		names []string
		n     int
		err   string
	}{
		{"1,2\n3,4\n", []string{"a", "b"}, 2, ""},
		{"1,2\n3\n", []string{"a", "b"}, 1, "record 2: record on line 2: wrong number of fields"},
		{"1,2,3\n", []string{"a", "b"}, 0, "record 1: record on line 1: wrong number of fields"},
		{"1,2\n3,4\n5\n", nil, 0, "record 3: record on line 3: wrong number of fields"},
		{"", []string{"a"}, 0, ""},
	} {
		_, recs, err := sameAsStd(t, []byte(c.data), csvRun{sep: ',', names: c.names})
		if len(recs) != c.n || (err == nil) != (c.err == "") || err != nil && err.Error() != "t.csv: "+c.err {
			t.Errorf("%q: %d records, error %v; want %d, %q", c.data, len(recs), err, c.n, c.err)
		}
	}
}

// TestCSVLongLines: lines longer than the read buffer, in quotes and out.
func TestCSVLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*csvReadSize/2)
	data := "a,b\n" + long + ",1\n\"" + long + "\n" + long + "\",2\n3," + long
	for _, size := range []int{0, 7} {
		_, recs, err := sameAsStd(t, []byte(data), csvRun{sep: ',', header: true, size: size})
		if err != nil || len(recs) != 3 || recs[1][0] != long+"\n"+long || recs[2][1] != long {
			t.Fatalf("size %d: %d records, %v", size, len(recs), err)
		}
	}
}

// TestCSVInterning: the values of a column are shared while it has few distinct ones;
// past the bound, they are read all the same, and no value aliases another record's.
func TestCSVInterning(t *testing.T) {
	var b strings.Builder
	b.WriteString("low,high\n")
	const n = 10000
	for i := range n {
		fmt.Fprintf(&b, "v%d,id-%d\n", i%3, i)
	}
	for _, run := range []csvRun{{sep: ',', header: true}, {sep: ',', header: true, batch: 7, values: 100, bytes: 1 << 20}, {sep: ',', header: true, values: 1000, bytes: 50}} {
		_, recs, err := sameAsStd(t, []byte(b.String()), run)
		if err != nil || len(recs) != n {
			t.Fatalf("%+v: %d records, %v", run, len(recs), err)
		}
		for i, r := range recs {
			if r[0] != fmt.Sprintf("v%d", i%3) || r[1] != fmt.Sprintf("id-%d", i) {
				t.Fatalf("%+v: record %d is %q", run, i+1, r)
			}
		}
		// The low column's values are one string each.
		if p0, p3 := unsafe.StringData(recs[0][0]), unsafe.StringData(recs[n-1][0]); p0 != p3 {
			t.Errorf("%+v: a value of few distinct ones is not shared", run)
		}
	}
}

// BenchmarkCSVRecords reads a table like Adult's: values of few distinct ones.
func BenchmarkCSVRecords(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("sex;age;race;marital-status;education;native-country;workclass;occupation;salary-class\n")
	cols := [][]string{{"Male", "Female"}, nil, {"White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"},
		{"Never-married", "Married-civ-spouse", "Divorced", "Married-spouse-absent", "Separated", "Married-AF-spouse", "Widowed"},
		{"Bachelors", "HS-grad", "11th", "Masters", "9th", "Some-college", "Assoc-acdm", "Assoc-voc", "7th-8th", "Doctorate", "Prof-school", "5th-6th", "10th", "1st-4th", "Preschool", "12th"},
		nil, {"State-gov", "Self-emp-not-inc", "Private", "Federal-gov", "Local-gov", "Self-emp-inc", "Without-pay"},
		{"Adm-clerical", "Exec-managerial", "Handlers-cleaners", "Prof-specialty", "Other-service", "Sales", "Craft-repair", "Transport-moving", "Farming-fishing", "Machine-op-inspct", "Tech-support", "Protective-serv", "Armed-Forces", "Priv-house-serv"},
		{"<=50K", ">50K"}}
	for i := range 73 {
		cols[1] = append(cols[1], fmt.Sprint(17+i))
	}
	for i := range 41 {
		cols[5] = append(cols[5], fmt.Sprintf("Country-%d", i))
	}
	x := uint64(1)
	for range 100000 {
		for j, vs := range cols {
			x = x*6364136223846793005 + 1442695040888963407
			if j > 0 {
				sb.WriteByte(';')
			}
			sb.WriteString(vs[(x>>33)%uint64(len(vs))])
		}
		sb.WriteByte('\n')
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := newCSVFile("t.csv", io.NopCloser(bytes.NewReader(data)), ';', true, nil, csvReadSize)
		if err != nil {
			b.Fatal(err)
		}
		r := f.Records(context.Background(), []int{0, 1, 2, 3, 4, 5, 6, 7, 8})
		n := 0
		for {
			_, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		r.Close()
		if n != 100000 {
			b.Fatal(n)
		}
	}
}

// FuzzCSVMatchesStdlib: the verifier's reading reads any bytes as encoding/csv does.
func FuzzCSVMatchesStdlib(f *testing.F) {
	seeds := []string{
		"a,b\n1,2\n", "a,b\r\n\"x\"\"y\",\"p\r\nq\"\r\n", "a,b\n1,2\r", "\n\na,b\n\n1,2",
		"a,b\n\"1\"x,2\n", "a,b\n1,2\"3\n", "a,b\n1,\"2\n\r", "a,b\n1,\"", "\xEF\xBB\xBFa,b\n1,2\n",
		"a€b\n\xe2€\xe2\x82\n", "a,b\n1\n", "a,\"b\"\"\n\"\"\",c\n", "a;b\n\"x;\";\"\"\n", "\"\"\n\"\n\"\n",
		"a,b\nxxxxxxxxXxxxxxxxx,1\nxxxxxxxxYxxxxxxxx,12\nxxxxxxxxXxxxxxxxx,21\n",
	}
	for i, s := range seeds {
		for _, sep := range []rune{',', ';', '€', '\t'} {
			f.Add([]byte(s), sep, i%2 == 0, uint8(i), uint16(i*7))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, sep rune, header bool, width uint8, sizes uint16) {
		run := csvRun{sep: sep, header: header, reverse: width&8 != 0}
		if !header {
			run.names = []string{"a", "b", "c", "d", "e"}[:width%6]
		}
		if sizes != 0 { // small buffers, batches and interning tables
			run.size, run.batch = int(sizes%17)+1, int(sizes>>4%5)+1
			run.values, run.bytes = int(sizes>>8%5)+1, int(sizes>>12)+1
		}
		sameAsStd(t, data, run)
	})
}

// BenchmarkCSVInterning reads a column of many distinct values, in random order,
// interning up to a number of them.
func BenchmarkCSVInterning(b *testing.B) {
	for _, distinct := range []int{16, 256, 1024, 4096, 65536} {
		var sb strings.Builder
		sb.WriteString("v\n")
		x := uint64(1)
		for range 1 << 20 {
			x = x*6364136223846793005 + 1442695040888963407
			fmt.Fprintf(&sb, "value-%d\n", (x>>33)%uint64(distinct))
		}
		data := []byte(sb.String())
		for _, values := range []int{0, 1024, 4096, 65536} {
			b.Run(fmt.Sprintf("distinct=%d/interned=%d", distinct, values), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					f, err := newCSVFile("t.csv", io.NopCloser(bytes.NewReader(data)), ',', true, nil, csvReadSize)
					if err != nil {
						b.Fatal(err)
					}
					f.internValues, f.internBytes = values, values*16
					r := f.Records(context.Background(), []int{0})
					for {
						if _, err := r.Read(); err != nil {
							break
						}
					}
					r.Close()
				}
			})
		}
	}
}
