package verify

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/schema"
)

// Expected outcomes of a Cover.
const (
	in  = "in"  // (true, nil)
	out = "out" // (false, nil)
	bad = "bad" // an error
)

type coverCase struct {
	released, original string
	want               string // in, out or bad
}

func checkCover(t *testing.T, name string, c Cover, cases []coverCase) {
	t.Helper()
	for _, tc := range cases {
		ok, err := c(tc.released, tc.original)
		got := out
		switch {
		case err != nil:
			got = bad
			// values long enough not to occur in a message by chance
			if (len(tc.released) > 4 && strings.Contains(err.Error(), tc.released)) ||
				(len(tc.original) > 4 && strings.Contains(err.Error(), tc.original)) {
				t.Errorf("%s(%q, %q): the error quotes a value: %v", name, tc.released, tc.original, err)
			}
		case ok:
			got = in
		}
		if got != tc.want {
			t.Errorf("%s(%q, %q) = %v, %v: %s, want %s", name, tc.released, tc.original, ok, err, got, tc.want)
		}
	}
}

func TestCoverRangeInteger(t *testing.T) {
	checkCover(t, "integer", CoverRange(schema.Integer), []coverCase{
		{"20", "20", in},
		{"*", "20", in},
		{"[17,35]", "20", in}, // Mondrian
		{"[17,35]", "17", in},
		{"[17,35]", "35", in},
		{"[20,24]", "23", in}, // interval builder
		{"[-10,-1]", "-5", in},
		{"[9223372036854775800,9223372036854775809]", "9223372036854775807", in}, // beyond 64 bits
		{"[17,35]", "16", out},
		{"[17,35]", "36", out},
		{"[20,24]", "25", out},
		{"21", "20", out},
		{"[17,35]", "x", out}, // not an integer: nothing to cover
		{"[5,3]", "4", bad},
		{"[a,b]", "4", bad},
		{"[1.5,3]", "2", bad},
		{"[17,35)", "20", bad}, // integers are written closed
		{"[17,35,40]", "20", bad},
		{"17-35", "20", bad},
		{"[17;35]", "20", bad},
	})
}

func TestCoverRangeFloat(t *testing.T) {
	checkCover(t, "float", CoverRange(schema.Float), []coverCase{
		{"0.5", "0.5", in},
		{"1", "1.0", in}, // the same value
		{"*", "NaN", in},
		{"[0.5,2.25]", "0.5", in}, // Mondrian, closed
		{"[0.5,2.25]", "2.25", in},
		{"[0.5,2.25]", "1", in},
		{"[20,30]", "25.5", in},
		{"[0.3,0.4)", "0.3", in}, // interval builder, half-open
		{"[0.3,0.4)", "0.35", in},
		{"[1,+Inf]", "1e300", in},
		{"[0.3,0.4)", "0.4", out},
		{"[0.5,2.25]", "2.2500001", out},
		{"[0.5,2.25]", "0.49", out},
		{"[0,1]", "NaN", out},
		{"0.6", "0.5", out},
		{"[0.4,0.3)", "0.35", bad},
		{"[0.3,0.3)", "0.3", bad}, // empty
		{"[2.25,0.5]", "1", bad},
		{"[NaN,1]", "0.5", bad},
		{"[a,b]", "0.5", bad},
		{"x", "0.5", bad},
	})
}

func TestCoverRangeTimestampAndUnordered(t *testing.T) {
	checkCover(t, "timestamp", CoverRange(schema.Timestamp), []coverCase{
		{"[2024-02-29T13:00:00Z,2024-02-29T14:00:00Z]", "2024-02-29T13:05:00.5Z", in},
		{"[2024-02-29T13:00:00Z,2024-02-29T14:00:00Z]", "2024-02-29T14:00:00Z", in},
		{"2024-02-29T15:00:00+02:00", "2024-02-29T13:00:00Z", in}, // the same instant
		{"[2024-02-29T13:00:00Z,2024-02-29T14:00:00Z]", "2024-02-29T14:00:00.000000001Z", out},
		{"[2024-02-29T14:00:00Z,2024-02-29T13:00:00Z]", "2024-02-29T13:30:00Z", bad},
		{"[2024-02-29,2024-03-01]", "2024-02-29T13:30:00Z", bad},
	})
	checkCover(t, "string", CoverRange(schema.String), []coverCase{
		{"a", "a", in},
		{"*", "a", in},
		{"b", "a", bad},
		{"[a,b]", "a", bad},
	})
}

func TestCoverDate(t *testing.T) {
	for name, c := range map[string]Cover{"CoverDate": CoverDate(), "CoverRange(date)": CoverRange(schema.Date)} {
		checkCover(t, name, c, []coverCase{
			{"2019-05-17", "2019-05-17", in},
			{"*", "2019-05-17", in},
			{"2019-05", "2019-05-17", in},
			{"2019-Q2", "2019-05-17", in},
			{"2019-Q1", "2019-03-31", in},
			{"2019-Q2", "2019-04-01", in},
			{"2019", "2019-05-17", in},
			{"[2010,2019]", "2019-05-17", in},
			{"[2019-01-03,2019-11-29]", "2019-05-17", in}, // Mondrian
			{"[2019-01-03,2019-11-29]", "2019-01-03", in},
			{"[2019-01-03,2019-11-29]", "2019-11-29", in},
			{"0999", "0999-12-31", in},
			{"[0,9]", "0005-06-07", in},
			{"2019-06", "2019-05-17", out},     // another month
			{"2018-05", "2019-05-17", out},     // same month, another year
			{"2019-Q3", "2019-05-17", out},     // another quarter
			{"2018", "2019-05-17", out},        // another year
			{"[2020,2029]", "2019-05-17", out}, // another decade
			{"[2019-05-18,2019-11-29]", "2019-05-17", out},
			{"[2019-01-03,2019-05-16]", "2019-05-17", out},
			{"2019-05-18", "2019-05-17", out},
			{"2019", "not a date", out},
			{"2019-13", "2019-05-17", bad},
			{"2019-Q5", "2019-05-17", bad},
			{"2019-Q0", "2019-05-17", bad},
			{"[2015,2024]", "2019-05-17", bad}, // not a decade
			{"[2010,2019)", "2019-05-17", bad},
			{"[2019-11-29,2019-01-03]", "2019-05-17", bad},
			{"[2019-01-03,2019-02-30]", "2019-01-05", bad},
			{"[a,b]", "2019-05-17", bad},
			{"May 2019", "2019-05-17", bad},
			{"19", "2019-05-17", bad},
		})
	}
}

func TestCoverMask(t *testing.T) {
	checkCover(t, "mask right", CoverMask(true), []coverCase{
		{"02139", "02139", in},
		{"0213*", "02139", in},
		{"021**", "02139", in},
		{"*****", "02139", in},
		{"*", "02139", in},
		{"Zü****", "Zürich", in}, // characters, not bytes
		{"Z*****", "Zürich", in},
		{"a**", "a*c", in}, // the original holds a '*'
		{"[2100,2200]", "2139", in},
		{"0214*", "02139", out},
		{"*2139", "02139", out}, // the wrong side
		{"02*3*", "02139", out},
		{"0213**", "02139", out}, // one character too many
		{"021*", "02139", out},
		{"Zü*****", "Zürich", out},
		{"", "02139", out},
		{"[2140,2200]", "2139", out},
		{"[2200,2100]", "2139", out},
	})
	checkCover(t, "mask left", CoverMask(false), []coverCase{
		{"*2139", "02139", in},
		{"**139", "02139", in},
		{"*****", "02139", in},
		{"0213*", "02139", out},
		{"*2138", "02139", out},
	})
	checkCover(t, "mask null", NullAs(CoverMask(true), "unknown"), []coverCase{
		{"unkn***", "", in},
		{"", "", in},
		{"abcd***", "", out},
	})
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCoverHierarchyFile(t *testing.T) {
	body := "\ufeffFlu;Respiratory;Infectious;*\r\n" +
		"Cold;Respiratory;Infectious;*\r\n" +
		"\r\n" +
		"Malaria;Parasitic;Infectious;*\n" +
		"Diabetes;Metabolic;Chronic;*\n" +
		"\"semi;colon\";Metabolic;Chronic;*\n" +
		"25;[20,29];[20,39];*\n"
	c, err := CoverHierarchyFile(writeFile(t, "diagnosis.csv", body))
	if err != nil {
		t.Fatal(err)
	}
	checkCover(t, "file", c, []coverCase{
		{"Flu", "Flu", in},
		{"Respiratory", "Flu", in},
		{"Infectious", "Flu", in},
		{"*", "Flu", in},
		{"Metabolic", "semi;colon", in},
		{"[20,29]", "25", in},
		{"[17,35]", "25", in},     // a Mondrian range of a numeric column
		{"Parasitic", "Flu", out}, // a sibling node, not an ancestor
		{"Cold", "Flu", out},      // a sibling leaf
		{"Chronic", "Flu", out},
		{"Respiratory", "Malaria", out},
		{"Infectious", "Ebola", out}, // not listed
		{"Metabolic", "semi", out},
		{"[26,35]", "25", out},
		{"[35,17]", "25", out},
		{"[30,39]", "25", out},
	})

	// A file whose top is a label of its own: that label covers every value, "*" none.
	c, err = CoverHierarchyFile(writeFile(t, "labelled.csv", "Flu;Respiratory;any disease\nBurn;Injury;any disease\n"))
	if err != nil {
		t.Fatal(err)
	}
	checkCover(t, "labelled top", c, []coverCase{
		{"any disease", "Flu", in},
		{"any disease", "Ebola", in}, // not listed: the top still covers it
		{"Respiratory", "Flu", in},
		{"*", "Flu", out},
		{"*", "Ebola", out},
	})

	const secret = "SECRET-LEAF"
	for _, tc := range []struct{ name, body, want string }{
		{"ragged", "a;x;*\nb;*\n", "wrong number of fields"},
		{"two tops", "a;x;*\n" + secret + ";y;any\n", ":2: the last level differs"},
		{"duplicate leaf", "a;x;*\n" + secret + ";x;*\n" + secret + ";y;*\n", ":3: a leaf value listed"},
		{"empty", "\n\n", "empty hierarchy file"},
		{"bad quote", "a;x;*\n\"" + secret + ";x;*\n", "quote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CoverHierarchyFile(writeFile(t, "h.csv", tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error quotes a value: %v", err)
			}
		})
	}
	if _, err := CoverHierarchyFile(filepath.Join(t.TempDir(), "missing.csv")); err == nil {
		t.Error("a missing file gave no error")
	}
}

// records is a Reader over records in memory. Like the pipeline's reader, it returns each
// record in a buffer that the next Read overwrites.
type records struct {
	recs [][]string
	i    int
	buf  []string
	err  error // returned after the records instead of io.EOF
}

func (r *records) Read() ([]string, error) {
	if r.i >= len(r.recs) {
		if r.err != nil {
			return nil, r.err
		}
		return nil, io.EOF
	}
	r.buf = append(r.buf[:0], r.recs[r.i]...)
	r.i++
	return r.buf, nil
}

const secret = "SECRET"

func TestTruthful(t *testing.T) {
	inHeader := []string{"id", "age", "zip", "admitted", "dx", "note"}
	input := [][]string{
		{"p1-" + secret, "23", "02139", "2019-05-17", "flu-" + secret, "a-" + secret},
		{"p2-" + secret, "27", "02138", "2019-06-01", "cold-" + secret, ""}, // a null note
		{"p3-" + secret, "41", "02139", "2020-01-09", "flu-" + secret, "c-" + secret},
		{"p4-" + secret, "45", "02141", "2021-12-31", "asthma-" + secret, "d-" + secret},
		{"p5-" + secret, "45", "02141", "2021-12-31", "asthma-" + secret, "d-" + secret}, // same as p4 but the id
	}
	cols := []string{"age", "zip", "admitted", "dx", "note"}
	covers := map[string]Cover{"age": CoverRange(schema.Integer), "zip": CoverMask(true), "admitted": CoverDate()}
	project := func(rec []string) []string { return slices.Clone(rec[1:]) }
	identity := make([][]string, len(input))
	for i, r := range input {
		identity[i] = project(r)
	}
	general := [][]string{
		{"[20,29]", "0213*", "2019", "flu-" + secret, "a-" + secret},
		{"[20,29]", "0213*", "2019", "cold-" + secret, ""},
		{"[40,49]", "0213*", "[2020,2029]", "flu-" + secret, "c-" + secret},
		{"[40,49]", "021**", "2021-Q4", "asthma-" + secret, "d-" + secret},
		{"[41,45]", "02141", "[2021-12-01,2022-01-05]", "asthma-" + secret, "d-" + secret},
	}
	with := func(recs [][]string, i, col int, v string) [][]string {
		out := make([][]string, len(recs))
		for j, r := range recs {
			out[j] = slices.Clone(r)
		}
		out[i][col] = v
		return out
	}
	pick := func(recs [][]string, idx ...int) [][]string {
		out := make([][]string, len(idx))
		for j, i := range idx {
			out[j] = slices.Clone(recs[i])
		}
		return out
	}

	cases := []struct {
		name    string
		release [][]string
		max     int
		want    int    // suppressed, when it passes
		wantErr string // "" = passes; else a substring of the violation
	}{
		{"identity", identity, 0, 0, ""},
		{"generalized", general, 0, 0, ""},
		{"empty release of an input", nil, 5, 5, ""},
		{"two missing", pick(general, 0, 2, 3), 2, 2, ""},
		{"two missing, limit 1", pick(general, 0, 2, 3), 1, 0, "more than 1 input records are missing"},
		{"first two missing, limit 1", pick(general, 2, 3, 4), 1, 0, "release record 1: explaining it would suppress more than the limit of 1"},
		{"the last of two equal records missing", pick(identity, 0, 1, 2, 3), 1, 1, ""},
		{"duplicated", pick(general, 0, 1, 1, 2, 3, 4), 5, 0, "release record 3 is not the generalization"},
		{"duplicated at the end", pick(general, 0, 1, 2, 3, 4, 4), 5, 0, "release record 6 is not the generalization"},
		{"invented", append(pick(general, 0, 1), []string{"[20,29]", "0213*", "2019", "flu-" + secret, "z-" + secret}), 5, 0, "release record 3 is not the generalization"},
		{"changed insensitive value", with(general, 2, 4, "changed-"+secret), 5, 0, `release record 3 is not the generalization of any later unused input record (invented, duplicated, reordered or changed); the next unused input record, 3, differs in column "note"`},
		{"null made a value", with(general, 1, 4, "x"), 5, 0, `differs in column "note"`},
		{"changed sensitive value", with(identity, 0, 3, "cold-"+secret), 5, 0, `release record 1 is not the generalization`},
		{"reordered", pick(general, 1, 0, 2, 3, 4), 5, 0, "release record 2 is not the generalization"},
		{"age not covered", with(general, 2, 0, "[30,39]"), 5, 0, `differs in column "age"`},
		{"zip not covered", with(general, 0, 1, "0214*"), 5, 0, `differs in column "zip"`},
		{"date not covered", with(general, 3, 2, "2021-Q3"), 5, 0, `differs in column "admitted"`},
		{"malformed range", with(general, 0, 0, "[29,20]"), 5, 0, `differs in column "age": an empty range`},
		{"malformed range, limit 0", with(general, 0, 0, "[29,20]"), 0, 0, `release record 1: explaining it would suppress more than the limit of 0`},
		{"too few fields", [][]string{slices.Clone(general[0][:4])}, 5, 0, "release record 1 has 4 fields, the header 5"},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inRecs := make([][]string, len(input))
			for i, r := range input {
				inRecs[i] = slices.Clone(r)
			}
			tr := Truth{Columns: cols, Covers: covers, MaxSuppressed: tc.max}
			n, err := Truthful(tr, inHeader, &records{recs: inRecs}, &records{recs: tc.release})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if n != tc.want {
					t.Fatalf("suppressed %d, want %d", n, tc.want)
				}
				return
			}
			var v *Violation
			if !errors.As(err, &v) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want a violation containing %q", err, tc.wantErr)
			}
			for _, bit := range []string{secret, "flu", "0213", "2019", "[20,29]"} {
				if strings.Contains(err.Error(), bit) {
					t.Errorf("the message quotes a data value (%q): %v", bit, err)
				}
			}
		})
	}
}

func TestTruthfulSetup(t *testing.T) {
	inHeader := []string{"id", "age", "dx"}
	input := [][]string{{"1", "23", "flu"}, {"2", "27", "cold"}}
	release := [][]string{{"[20,29]", "flu"}, {"[20,29]", "cold"}}
	age := CoverRange(schema.Integer)
	readErr := errors.New("disk on fire")
	cases := []struct {
		name      string
		truth     Truth
		inHeader  []string
		in, rel   *records
		violation bool
		wantErr   string
	}{
		{"column not in the input", Truth{Columns: []string{"age", "name"}, Covers: map[string]Cover{"age": age}}, inHeader,
			&records{recs: input}, &records{recs: release}, true, `release column "name" is not a column of the input`},
		{"column twice", Truth{Columns: []string{"age", "age"}, Covers: map[string]Cover{"age": age}}, inHeader,
			&records{recs: input}, &records{recs: release}, true, `names column "age" twice`},
		{"input column twice", Truth{Columns: []string{"age", "dx"}, Covers: map[string]Cover{"age": age}}, []string{"age", "age", "dx"},
			&records{recs: input}, &records{recs: release}, false, `the input names column "age" twice`},
		{"cover of no column", Truth{Columns: []string{"age", "dx"}, Covers: map[string]Cover{"age": age, "zip": age}}, inHeader,
			&records{recs: input}, &records{recs: release}, false, `quasi-identifier "zip" is not a release column`},
		{"nil cover", Truth{Columns: []string{"age", "dx"}, Covers: map[string]Cover{"age": nil}}, inHeader,
			&records{recs: input}, &records{recs: release}, false, `nil cover`},
		{"negative limit", Truth{Columns: []string{"age", "dx"}, MaxSuppressed: -1}, inHeader,
			&records{recs: input}, &records{recs: release}, false, `negative suppression limit`},
		{"short input record", Truth{Columns: []string{"age", "dx"}, Covers: map[string]Cover{"age": age}}, inHeader,
			&records{recs: [][]string{{"1", "23"}}}, &records{recs: release}, false, `input record 1 has 2 fields, the header 3`},
		{"input read error", Truth{Columns: []string{"age", "dx"}, Covers: map[string]Cover{"age": age}}, inHeader,
			&records{recs: input[:1], err: readErr}, &records{recs: release}, false, readErr.Error()},
		{"release read error", Truth{Columns: []string{"age", "dx"}, Covers: map[string]Cover{"age": age}}, inHeader,
			&records{recs: input}, &records{recs: release[:1], err: readErr}, false, readErr.Error()},
		{"input read error after the release", Truth{Columns: []string{"age", "dx"}, Covers: map[string]Cover{"age": age}, MaxSuppressed: 5}, inHeader,
			&records{recs: input, err: readErr}, &records{recs: release[:1]}, false, readErr.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Truthful(tc.truth, tc.inHeader, tc.in, tc.rel)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
			}
			var v *Violation
			if errors.As(err, &v) != tc.violation {
				t.Errorf("violation %v, want %v: %v", errors.As(err, &v), tc.violation, err)
			}
			if strings.Contains(tc.wantErr, "disk") && !errors.Is(err, readErr) {
				t.Errorf("the read error is not returned as is: %v", err)
			}
		})
	}
	// the nulls of a quasi-identifier read as a value
	tr := Truth{Columns: []string{"age", "dx"}, Covers: map[string]Cover{"age": NullAs(age, "0")}}
	n, err := Truthful(tr, inHeader, &records{recs: [][]string{{"1", "", "flu"}}}, &records{recs: [][]string{{"[0,9]", "flu"}}})
	if err != nil || n != 0 {
		t.Fatalf("null read as 0: %d, %v", n, err)
	}
}
