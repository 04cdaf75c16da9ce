package main

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sanitizer/gen"
	"sanitizer/internal/testfiles"
)

// TestGenFlags: --rows outside 1..gen.MaxRows, a --seed that is not a decimal uint64
// and a --table that is none of gen.Tables are command-line mistakes (exit 2, naming the flag, nothing written); a
// --seed with leading zeros is the decimal number, not an octal one.
func TestGenFlags(t *testing.T) {
	for _, tc := range []struct {
		flag, value string
	}{
		{"--rows", "0"},
		{"--rows", "-5"},
		{"--rows", strconv.Itoa(gen.MaxRows + 1)},
		{"--rows", "9223372036854775807"},
		{"--rows", "99999999999999999999"},
		{"--rows", "0x10"},
		{"--rows", "1_000"},
		{"--rows", ""},
		{"--seed", "-1"},
		{"--seed", "x"},
		{"--seed", "0x10"},
		{"--seed", "1_000"},
		{"--seed", "+3"},
		{"--seed", "18446744073709551616"},
		{"--seed", ""},
		{"--table", "x"},
		{"--table", ""},
		{"--table", "Admissions"},
	} {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			dir := t.TempDir()
			// A bad --format too: were the flag not checked first, the run would stop
			// there (naming --format), not write a huge table.
			args := []string{"gen", "--rows", "10", "--format", "xlsx", "--out", filepath.Join(dir, "g.csv")}
			code, stdout, stderr := runCLI(t, append(args, tc.flag+"="+tc.value)...)
			if code != 2 || !strings.Contains(stderr, tc.flag) {
				t.Errorf("exit %d, want 2 naming %s\nstdout: %s\nstderr: %s", code, tc.flag, stdout, stderr)
			}
			if left := testfiles.Names(t, dir); len(left) > 0 {
				t.Errorf("a refused run left %q", left)
			}
		})
	}
	dir := t.TempDir()
	write := func(name, seed string) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		if code, _, stderr := runCLI(t, "gen", "--rows", "50", "--seed", seed, "--out", p); code != 0 {
			t.Fatalf("--seed %s: exit %d\n%s", seed, code, stderr)
		}
		return readFile(t, p)
	}
	if !bytes.Equal(write("a.csv", "010"), write("b.csv", "10")) {
		t.Error("--seed 010 and --seed 10 wrote different files")
	}
	if !bytes.Equal(write("c.csv", "18446744073709551615"), write("d.csv", "18446744073709551615")) {
		t.Error("the largest seed wrote two different files")
	}
	if code, _, stderr := runCLI(t, "gen", "--rows", strconv.Itoa(gen.MaxRows), "--seed", "1", "--out", filepath.Join(dir, "e.csv"), "--format", "xlsx"); code != 2 || strings.Contains(stderr, "--rows") {
		t.Errorf("--rows %d is refused: exit %d\n%s", gen.MaxRows, code, stderr)
	}
}

// TestGenAdmissions: gen --table admissions writes the admissions table (several rows
// per patient; the same seed, the same file; not the hospital table), and release runs
// testdata/admissions.yaml on it (a row-level release).
func TestGenAdmissions(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, args ...string) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		if code, _, stderr := runCLI(t, append([]string{"gen", "--rows", "6000", "--seed", "4", "--out", p}, args...)...); code != 0 {
			t.Fatalf("gen %v: exit %d\n%s", args, code, stderr)
		}
		return readFile(t, p)
	}
	a, b := write("a.csv", "--table", "admissions"), write("b.csv", "--table=admissions")
	if !bytes.Equal(a, b) {
		t.Error("the same seed wrote two admissions tables")
	}
	if h, h2 := write("h.csv"), write("h2.csv", "--table", "hospital"); bytes.Equal(a, h) || !bytes.Equal(h, h2) {
		t.Error("--table admissions wrote the hospital table, or --table hospital is not the default")
	}
	patients := map[string]bool{}
	for _, rec := range readCSV(t, filepath.Join(dir, "a.csv"), ',')[1:] {
		patients[rec[0]] = true
	}
	if n := len(patients); n < 6000/5 || n > 6000/2 {
		t.Errorf("%d patients in 6000 admissions, want about 6000/3.5", n)
	}
	out := filepath.Join(dir, "release.csv")
	code, _, stderr := runCLI(t, "release", "-c", filepath.Join(repoTestdata(t), "admissions.yaml"), "--in", filepath.Join(dir, "a.csv"), "--out", out)
	if code != 0 {
		t.Fatalf("release of the admissions table: exit %d\n%s", code, stderr)
	}
	if rows := readCSV(t, out, ','); len(rows) < 6000*95/100 {
		t.Errorf("the release holds %d rows", len(rows))
	}
}

// FuzzDecimal: a --rows or --seed value is taken only when it is decimal digits (a
// minus sign before them for --rows), and then it is the number they write.
func FuzzDecimal(f *testing.F) {
	for _, s := range []string{"10", "010", "-1", "0x10", "1_000", "18446744073709551615", "", "+3", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var n int
		var u uint64
		for _, d := range []interface {
			Set(string) error
			String() string
		}{decimal[int]{&n}, decimal[uint64]{&u}} {
			if d.Set(s) != nil {
				continue
			}
			digits := strings.TrimPrefix(s, "-")
			if digits == "" || strings.Trim(digits, "0123456789") != "" {
				t.Fatalf("%q taken as %s", s, d.String())
			}
			if want := strings.TrimLeft(digits, "0"); strings.TrimPrefix(d.String(), "-") != cmpOr(want, "0") {
				t.Fatalf("%q taken as %s", s, d.String())
			}
		}
	})
}

// cmpOr is s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
