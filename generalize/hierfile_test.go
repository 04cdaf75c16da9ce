package generalize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
)

func TestReadHierarchyOK(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		height int
		rows   [][]string // expected values per leaf, in file order
	}{
		{
			name:   "plain LF",
			in:     "a;x;*\nb;x;*\nc;y;*\n",
			height: 3,
			rows:   [][]string{{"a", "x", "*"}, {"b", "x", "*"}, {"c", "y", "*"}},
		},
		{
			name:   "CRLF without final newline",
			in:     "a;x;*\r\nb;y;*",
			height: 3,
			rows:   [][]string{{"a", "x", "*"}, {"b", "y", "*"}},
		},
		{
			name:   "BOM and empty lines",
			in:     "\ufeff\na;*\n\n\r\nb;*\n\n",
			height: 2,
			rows:   [][]string{{"a", "*"}, {"b", "*"}},
		},
		{
			name:   "quoted values with separator, quote and newline",
			in:     "\"a;b\";\"say \"\"hi\"\"\";*\n\"multi\nline\";x;*\nplain;x;*\n",
			height: 3,
			rows:   [][]string{{"a;b", "say \"hi\"", "*"}, {"multi\nline", "x", "*"}, {"plain", "x", "*"}},
		},
		{
			name:   "empty leaf and unicode",
			in:     ";unknown;*\nZürich;CH;*\n東京;JP;*\n",
			height: 3,
			rows:   [][]string{{"", "unknown", "*"}, {"Zürich", "CH", "*"}, {"東京", "JP", "*"}},
		},
		{
			name:   "a label as the top, as ARX allows",
			in:     "flu;respiratory;any disease\nburn;injury;any disease\n",
			height: 3,
			rows:   [][]string{{"flu", "respiratory", "any disease"}, {"burn", "injury", "any disease"}},
		},
		{
			name:   "stars as the top",
			in:     "02139;0213*;*****\n02141;0214*;*****\n",
			height: 3,
			rows:   [][]string{{"02139", "0213*", "*****"}, {"02141", "0214*", "*****"}},
		},
		{
			name:   "BOM only in the middle is data",
			in:     "a;*\n\ufeffb;*\n",
			height: 2,
			rows:   [][]string{{"a", "*"}, {"\ufeffb", "*"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ReadHierarchy(strings.NewReader(tc.in), "h.csv")
			if err != nil {
				t.Fatalf("ReadHierarchy: %v", err)
			}
			if h.Source() != "h.csv" {
				t.Errorf("Source = %q", h.Source())
			}
			if h.Height() != tc.height || h.Leaves() != len(tc.rows) {
				t.Fatalf("Height, Leaves = %d, %d; want %d, %d", h.Height(), h.Leaves(), tc.height, len(tc.rows))
			}
			if top := tc.rows[0][tc.height-1]; h.TopValue() != top {
				t.Errorf("TopValue = %q, want %q", h.TopValue(), top)
			}
			for i, row := range tc.rows {
				leaf, ok := h.Leaf(row[0])
				if !ok || leaf != int32(i) {
					t.Fatalf("Leaf(%q) = %d, %v; want %d", row[0], leaf, ok, i)
				}
				for l, want := range row {
					if got := h.Value(l, h.Code(l, leaf)); got != want {
						t.Errorf("leaf %d level %d = %q, want %q", i, l, got, want)
					}
				}
			}
		})
	}
}

func TestReadHierarchyErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string // substring of the message after "h.csv:<line>: "
	}{
		{"empty file", "", 1, "empty"},
		{"only blank lines", "\n\r\n\n", 1, "empty"},
		{"only BOM", "\ufeff", 1, "empty"},
		{"unequal depth", "a;x;*\n\nb;*\n", 3, "has 2 levels, the first row has 3"},
		{"unequal depth deeper", "a;*\nb;x;*\n", 2, "has 3 levels"},
		{"duplicate leaf", "a;x;*\nb;x;*\n\n\na;y;*\n", 5, "listed twice"},
		{"duplicate leaf via quoting", "a;*\r\n\"a\";*\r\n", 2, "listed twice"},
		{"last value not the first row's", "a;x;*\nb;y;all\n", 2, "single top value"},
		{"different top values", "a;top1\nb;top2\n", 2, "single top value"},
		{"different top values later", "a;x;any\nb;x;any\nc;y;Any\n", 3, "single top value"},
		{"empty top", "a;x;\nb;x;\n", 1, "top value is empty"},
		{"inconsistent", "a;x;p;*\nb;y;p;*\nc;x;q;*\n", 3, "inconsistent"},
		{"inconsistent after multiline quote", "\"a\n\";x;p;*\nb;x;q;*\n", 3, "inconsistent"},
		{"one column", "a\nb\n", 1, "at least a value"},
		{"one column later", "a;*\nb\n", 2, "has 1 levels"},
		{"only star", "*\n", 1, "at least a value"},
		{"bare quote", "a;*\nb\"c;*\n", 2, "bare \""},
		{"text after closing quote", "a;*\n\n\"b\"c;*\n", 3, "extraneous or missing \""},
		{"unterminated quote", "a;*\nb;\"x;*\nc;*\n", 2, "line 3"},
		{"bad quote after BOM", "\ufeffa\"b;*\n", 1, "bare \""},
		{"too many levels", "a" + strings.Repeat(";x", 31) + ";*\n", 1, "a row of 33 levels: a hierarchy has at most 32"},
		{"too many levels later", "a;*\nb" + strings.Repeat(";x", 40) + ";*\n", 2, "a row of 42 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ReadHierarchy(strings.NewReader(tc.in), "h.csv")
			if err == nil {
				t.Fatalf("ReadHierarchy succeeded with height %d", h.Height())
			}
			if !errors.Is(err, fault.ErrBadInput) {
				t.Errorf("error %v does not match fault.ErrBadInput", err)
			}
			prefix := fmt.Sprintf("h.csv:%d: ", tc.line)
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q does not start with %q", err, prefix)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
		})
	}
}

// TestReadHierarchyNoValuesInMessages: a hierarchy may list a sensitive column's
// values; messages must not repeat them.
func TestReadHierarchyNoValuesInMessages(t *testing.T) {
	const secret = "HIV-positive"
	for _, in := range []string{
		secret + ";x;*\n" + secret + ";x;*\n",
		secret + ";x;*\nb;" + secret + "\n",
		secret + ";x;*\nb;*\n",
		"a;" + secret + ";p;*\nb;" + secret + ";q;*\n",
		secret + "\"x;*\n",
	} {
		_, err := ReadHierarchy(strings.NewReader(in), "h.csv")
		if err == nil {
			t.Fatalf("%q: no error", in)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q repeats a value", err)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadHierarchyReadError(t *testing.T) {
	_, err := ReadHierarchy(failingReader{}, "h.csv")
	if err == nil || !errors.Is(err, fault.ErrBadInput) || !strings.HasPrefix(err.Error(), "h.csv:") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadHierarchy(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "sex.csv")
	if err := os.WriteFile(good, []byte("\ufeffF;*\r\nM;*\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := LoadHierarchy(good)
	if err != nil {
		t.Fatal(err)
	}
	if h.Leaves() != 2 || h.Height() != 2 || h.Source() != good {
		t.Errorf("Leaves, Height, Source = %d, %d, %q", h.Leaves(), h.Height(), h.Source())
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("F;*\nM;x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadHierarchy(bad); err == nil || !errors.Is(err, fault.ErrBadInput) || !strings.HasPrefix(err.Error(), bad+":2: ") {
		t.Errorf("bad file: err = %v", err)
	}
	missing := filepath.Join(dir, "missing.csv")
	_, err = LoadHierarchy(missing)
	if err == nil || !errors.Is(err, fault.ErrBadInput) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: err = %v", err)
	}
}

// hierAdultDir is the shared Adult data set, relative to the package folder.
const hierAdultDir = "../../shared/data/adult"

func TestAdultHierarchies(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(hierAdultDir, "adult_hierarchy_*.csv"))
	if len(files) == 0 {
		t.Skip("no shared Adult data at " + hierAdultDir)
	}
	want := map[string]struct{ leaves, height int }{
		"age":            {100, 5},
		"education":      {16, 4},
		"marital-status": {7, 3},
		"native-country": {41, 3},
		"occupation":     {14, 3},
		"race":           {5, 2},
		"salary-class":   {2, 2},
		"sex":            {2, 2},
		"workclass":      {8, 3},
	}
	seen := 0
	for _, f := range files {
		col := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "adult_hierarchy_"), ".csv")
		t.Run(col, func(t *testing.T) {
			h, err := LoadHierarchy(f)
			if err != nil {
				t.Fatal(err)
			}
			// Against the file itself: one leaf per non-empty line, as many levels as fields.
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
				if l != "" {
					lines = append(lines, l)
				}
			}
			if h.Leaves() != len(lines) {
				t.Errorf("Leaves = %d, file has %d rows", h.Leaves(), len(lines))
			}
			for i, l := range lines {
				fields := strings.Split(l, ";")
				if len(fields) != h.Height() {
					t.Fatalf("row %d has %d fields, Height = %d", i+1, len(fields), h.Height())
				}
				leaf, ok := h.Leaf(fields[0])
				if !ok || leaf != int32(i) {
					t.Fatalf("Leaf(row %d) = %d, %v", i+1, leaf, ok)
				}
				for lv, v := range fields {
					if got := h.Value(lv, h.Code(lv, leaf)); got != v {
						t.Errorf("row %d level %d = %q, want %q", i+1, lv, got, v)
					}
				}
			}
			top := h.Height() - 1
			if h.Size(top) != 1 || h.Value(top, 0) != "*" || h.LeafCount(top, 0) != h.Leaves() {
				t.Errorf("top level: size %d, value %q, leaves %d", h.Size(top), h.Value(top, 0), h.LeafCount(top, 0))
			}
			if w, ok := want[col]; ok {
				seen++
				if h.Leaves() != w.leaves || h.Height() != w.height {
					t.Errorf("Leaves, Height = %d, %d; want %d, %d", h.Leaves(), h.Height(), w.leaves, w.height)
				}
			}
		})
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d known Adult hierarchies", seen, len(want))
	}
}

func TestAdultKnownEntries(t *testing.T) {
	// Checked here, not in a subtest: a subtest must not skip its parent.
	if _, err := os.Stat(hierAdultDir); err != nil {
		t.Skip("no shared Adult data at " + hierAdultDir)
	}
	load := func(t *testing.T, col string) *Hierarchy {
		t.Helper()
		h, err := LoadHierarchy(filepath.Join(hierAdultDir, "adult_hierarchy_"+col+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tests := []struct {
		col, leaf string
		level     int
		value     string
		count     int // leaves under value
	}{
		{"age", "1", 1, "0-4", 5}, // ARX's file puts 1..5 under "0-4"
		{"age", "37", 2, "30-39", 10},
		{"age", "90", 3, "80-99", 20},
		{"age", "100", 4, "*", 100},
		{"education", "Masters", 1, "Graduate", 2},
		{"education", "Bachelors", 2, "Higher education", 7},
		{"education", "Preschool", 1, "Primary School", 3},
		{"sex", "Female", 0, "Female", 1},
		{"sex", "Male", 1, "*", 2},
	}
	for _, tc := range tests {
		t.Run(tc.col+"/"+tc.leaf, func(t *testing.T) {
			h := load(t, tc.col)
			leaf, ok := h.Leaf(tc.leaf)
			if !ok {
				t.Fatalf("leaf %q not found", tc.leaf)
			}
			c := h.Code(tc.level, leaf)
			if got := h.Value(tc.level, c); got != tc.value {
				t.Errorf("Value = %q, want %q", got, tc.value)
			}
			if got := h.LeafCount(tc.level, c); got != tc.count {
				t.Errorf("LeafCount = %d, want %d", got, tc.count)
			}
		})
	}
}
