package sample

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func generate(t testing.TB, n int, seed uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Hospital(&buf, n, seed); err != nil {
		t.Fatalf("Hospital(%d, %d): %v", n, seed, err)
	}
	return buf.Bytes()
}

func TestHospitalDeterministic(t *testing.T) {
	tests := []struct {
		name       string
		seedA      uint64
		seedB      uint64
		n          int
		wantSameAs bool
	}{
		{"same seed", 7, 7, 5000, true},
		{"same seed zero", 0, 0, 5000, true},
		{"different seed", 7, 8, 5000, false},
		{"different seed from zero", 0, 1, 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := generate(t, tt.n, tt.seedA), generate(t, tt.n, tt.seedB)
			if got := bytes.Equal(a, b); got != tt.wantSameAs {
				t.Errorf("bytes equal = %v, want %v", got, tt.wantSameAs)
			}
		})
	}
}

// TestHospitalGolden: the hospital table of a seed stays the bytes it was when the
// admissions table was added beside it (their generators share code).
func TestHospitalGolden(t *testing.T) {
	for _, tc := range []struct {
		n      int
		seed   uint64
		sha256 string
	}{
		{5000, 7, "4484f56cb4e1b22c5e41b765be40aec1b1ad7fe1bce99a90b95f5f423cdf7ca1"},
		{100000, 1, "32420d9df4f78e8e08f9171db7252dbde49303a8c37f5aaa2273041467961695"},
	} {
		if got := fmt.Sprintf("%x", sha256.Sum256(generate(t, tc.n, tc.seed))); got != tc.sha256 {
			t.Errorf("%d rows, seed %d: SHA-256 %s, want %s", tc.n, tc.seed, got, tc.sha256)
		}
	}
}

func TestHospitalPrefix(t *testing.T) {
	// A longer run with the same seed starts with the shorter one's rows.
	short, long := generate(t, 300, 3), generate(t, 1000, 3)
	if !bytes.HasPrefix(long, short) {
		t.Error("rows of a 300-row run are not the first rows of a 1000-row run")
	}
}

func TestHospitalSmallN(t *testing.T) {
	header := strings.Join(HospitalColumns, ",") + "\n"
	if got := string(generate(t, 0, 1)); got != header {
		t.Errorf("n=0 wrote %q, want the header %q", got, header)
	}
	if err := Hospital(io.Discard, -1, 1); err == nil {
		t.Error("n=-1: want an error")
	}
}

type failWriter struct{ after int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

func TestHospitalWriteError(t *testing.T) {
	for _, after := range []int{0, 1, 3} {
		if err := Hospital(&failWriter{after: after}, 10000, 1); err == nil {
			t.Errorf("writer failing after %d writes: want an error", after)
		}
	}
}

func TestNextReusesRow(t *testing.T) {
	g := NewHospitalGen(1)
	row := make([]string, 0, 16)
	got := g.Next(row)
	if len(got) != len(HospitalColumns) || &got[0] != &row[:1][0] {
		t.Errorf("Next did not fill the given row in place (len %d)", len(got))
	}
	if got := g.Next(nil); len(got) != len(HospitalColumns) {
		t.Errorf("Next(nil) returned %d fields", len(got))
	}
}

// hierarchyLeaves reads an ARX hierarchy file and returns its rows.
func hierarchyRows(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("\r")) || !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("%s: want LF line ends", path)
	}
	var rows [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rows = append(rows, strings.Split(sc.Text(), ";"))
	}
	return rows
}

func TestHierarchyFiles(t *testing.T) {
	tests := []struct {
		path string
		want [][]string
	}{
		{"../testdata/hierarchies/sex.csv", [][]string{{"F", "*"}, {"M", "*"}}},
		{"../testdata/hierarchies/diagnosis.csv", func() [][]string {
			var w [][]string
			for _, d := range diagnoses {
				w = append(w, []string{d.name, d.category, "*"})
			}
			return w
		}()},
	}
	// The ward and insurance hierarchies must list every value the generator can
	// produce (their upper levels are free).
	for path, values := range map[string][]string{
		"../testdata/hierarchies/ward.csv": func() []string {
			var w []string
			for _, d := range diagnoses {
				for n := 1; n <= 3; n++ {
					w = append(w, d.category+" "+smallInts[n])
				}
			}
			return w
		}(),
		"../testdata/hierarchies/insurance.csv": insurances,
	} {
		listed := map[string]bool{}
		for _, r := range hierarchyRows(t, path) {
			listed[r[0]] = true
		}
		for _, v := range values {
			if !listed[v] {
				t.Errorf("%s does not list %q", path, v)
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rows := hierarchyRows(t, tt.path)
			seen := map[string]bool{}
			for i, r := range rows {
				if seen[r[0]] {
					t.Errorf("row %d: value %q listed twice", i+1, r[0])
				}
				seen[r[0]] = true
			}
			if !slices.EqualFunc(rows, tt.want, slices.Equal[[]string]) {
				t.Errorf("rows = %q\nwant %q", rows, tt.want)
			}
		})
	}
}

func TestHospitalRows(t *testing.T) {
	const n = 50000
	data := generate(t, n, 20240601)
	if bytes.Contains(data, []byte("\r")) {
		t.Error("output contains CR; want LF line ends")
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(HospitalColumns)
	records, err := r.ReadAll()
	if err != nil {
		t.Fatalf("output does not parse as CSV with %d fields per row: %v", len(HospitalColumns), err)
	}
	if len(records) != n+1 {
		t.Fatalf("%d rows, want header + %d", len(records), n)
	}
	if !slices.Equal(records[0], HospitalColumns) {
		t.Fatalf("header %q, want %q", records[0], HospitalColumns)
	}

	known := map[string]bool{}
	for _, row := range hierarchyRows(t, "../testdata/hierarchies/diagnosis.csv") {
		known[row[0]] = true
	}
	first, _ := time.Parse(time.DateOnly, "2019-01-01")
	last, _ := time.Parse(time.DateOnly, "2024-12-31")
	isDigits := func(s string, n int) bool {
		if len(s) != n {
			return false
		}
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}

	type person struct{ name, sex, zip string }
	people := map[string]person{}
	zipCount := map[string]int{}
	zipAge := map[[2]string]int{}
	sexCount := map[string]int{}
	for i, row := range records[1:] {
		line := i + 2
		id, name, ageS, sex, zip, admitted, diag, stayS := row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7]
		if id[0] != 'P' || !isDigits(id[1:], 7) {
			t.Fatalf("line %d: patient_id %q, want P + 7 digits", line, id)
		}
		if f := strings.Fields(name); len(f) != 2 {
			t.Fatalf("line %d: name %q, want first and last name", line, name)
		}
		age, err := strconv.Atoi(ageS)
		if err != nil || age < 0 || age > 104 {
			t.Fatalf("line %d: age %q, want an integer in 0..104", line, ageS)
		}
		if sex != "F" && sex != "M" {
			t.Fatalf("line %d: sex %q", line, sex)
		}
		if !isDigits(zip, 5) {
			t.Fatalf("line %d: zip %q, want 5 digits", line, zip)
		}
		d, err := time.Parse(time.DateOnly, admitted)
		if err != nil || d.Before(first) || d.After(last) {
			t.Fatalf("line %d: admitted %q, want a date in 2019-01-01..2024-12-31", line, admitted)
		}
		if !known[diag] {
			t.Fatalf("line %d: diagnosis %q not in diagnosis.csv", line, diag)
		}
		if diag == "Pregnancy complication" && (sex != "F" || age < 16 || age > 45) {
			t.Fatalf("line %d: pregnancy complication for sex %s, age %d", line, sex, age)
		}
		if stay, err := strconv.Atoi(stayS); err != nil || stay < 0 {
			t.Fatalf("line %d: stay_days %q, want an integer >= 0", line, stayS)
		}
		p := person{name, sex, zip}
		if prev, ok := people[id]; ok && prev != p {
			t.Fatalf("line %d: patient %s was %v, now %v", line, id, prev, p)
		}
		people[id] = p
		zipCount[zip]++
		zipAge[[2]string{zip, ageS}]++
		sexCount[sex]++
	}

	if share := 1 - float64(len(people))/n; share < 0.10 || share > 0.20 {
		t.Errorf("readmission share %.3f, want about 0.15", share)
	}
	if f := float64(sexCount["F"]) / n; f < 0.49 || f > 0.55 {
		t.Errorf("share of F %.3f, want about 0.52", f)
	}
	counts := make([]int, 0, len(zipCount))
	for _, c := range zipCount {
		counts = append(counts, c)
	}
	slices.Sort(counts)
	top, median := counts[len(counts)-1], counts[len(counts)/2]
	if top < 5*median {
		t.Errorf("zip counts not skewed: top %d, median %d", top, median)
	}
	rare := 0
	for _, c := range zipAge {
		if c < 5 {
			rare++
		}
	}
	if rare == 0 {
		t.Error("no (zip, age) combination occurs fewer than 5 times")
	}
	t.Logf("%d zips (top %d, median %d), %d of %d (zip, age) combinations below 5, %d patients",
		len(zipCount), top, median, rare, len(zipAge), len(people))
}

func BenchmarkHospital(b *testing.B) {
	b.ReportAllocs()
	if err := Hospital(io.Discard, b.N, 1); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
