package verify

import (
	"encoding/csv"
	"errors"
	"math"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
)

func TestRelease(t *testing.T) {
	spec := Spec{K: 2, MaxSuppressed: 1, InputRows: 5, Columns: []string{"age", "zip", "dx"}, Quasi: []string{"age", "zip"}}
	cases := []struct {
		name    string
		spec    Spec
		body    string
		wantErr string // "" = valid
		minK    int
	}{
		{"valid, one suppressed", spec, "age,zip,dx\n\"[20,29]\",021**,a\n\"[20,29]\",021**,b\n*,*,c\n*,*,d\n", "", 2},
		{"valid, none suppressed", Spec{K: 2, MaxSuppressed: 0, InputRows: 4, Columns: spec.Columns, Quasi: spec.Quasi}, "age,zip,dx\n1,2,a\n1,2,b\n3,4,c\n3,4,d\n", "", 2},
		{"class below k", spec, "age,zip,dx\n\"[20,29]\",021**,a\n\"[20,29]\",021**,b\n*,*,c\n\"[30,39]\",*,d\n", "smallest class has 1", 1},
		{"too many suppressed", spec, "age,zip,dx\n*,*,a\n*,*,b\n*,*,c\n", "2 records suppressed, the limit is 1", 3},
		{"more records than input", spec, "age,zip,dx\n*,*,a\n*,*,b\n*,*,c\n*,*,d\n*,*,e\n*,*,f\n", "more than the input", 6},
		{"sensitive values do not split classes", spec, "age,zip,dx\n1,2,a\n1,2,b\n1,2,c\n1,2,d\n", "", 4},
		// "a,b"+"c" and "a"+"b,c" must not be the same class
		{"no key collisions", Spec{K: 2, MaxSuppressed: 3, InputRows: 4, Columns: spec.Columns, Quasi: spec.Quasi}, "age,zip,dx\n\"1:2\",3,a\n1,\"2:3\",b\n", "smallest class has 1", 1},
		{"wrong header", spec, "age,dx,zip\n*,a,*\n", "header is not the expected", 0},
		{"identifier leaked", spec, "age,zip,dx,name\n*,*,a,x\n", "header is not the expected", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := csv.NewReader(strings.NewReader(c.body))
			header, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			m, err := Release(c.spec, header, r)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected violation: %v", err)
				}
			} else {
				var v *Violation
				if !errors.As(err, &v) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want a violation containing %q", err, c.wantErr)
				}
			}
			if m != nil && m.MinClass != c.minK {
				t.Errorf("measured k %d, want %d", m.MinClass, c.minK)
			}
		})
	}
}

// TestReleaseUtility: the class-based utility metrics of a release, computed by hand:
// classes of 2 and 2, one record suppressed of 5: discernibility 2²+2²+1·5 = 13, C_AVG
// (4 records / 2 classes) / k=2 = 1.
func TestReleaseUtility(t *testing.T) {
	spec := Spec{K: 2, MaxSuppressed: 1, InputRows: 5, Columns: []string{"age", "dx"}, Quasi: []string{"age"}}
	r := csv.NewReader(strings.NewReader("age,dx\n1,a\n1,b\n2,c\n2,d\n"))
	header, _ := r.Read()
	m, err := Release(spec, header, r)
	if err != nil {
		t.Fatal(err)
	}
	if m.Discernibility != 13 || m.CAvg != 1 {
		t.Errorf("discernibility %g, C_AVG %g; want 13, 1", m.Discernibility, m.CAvg)
	}
}

func TestReleaseFieldCount(t *testing.T) {
	spec := Spec{K: 1, InputRows: 2, Columns: []string{"a", "b"}, Quasi: []string{"a"}}
	r := csv.NewReader(strings.NewReader("x,y\nz\n"))
	r.FieldsPerRecord = -1
	_, err := Release(spec, []string{"a", "b"}, r)
	var v *Violation
	if !errors.As(err, &v) || !strings.Contains(err.Error(), "record 2 has 1 fields") {
		t.Fatalf("got %v", err)
	}
}

// TestReleaseSensitive: the verifier counts each class's sensitive values itself and
// refuses a class that fails l-diversity or t-closeness, or a value the input lacks.
func TestReleaseSensitive(t *testing.T) {
	sens := func(models []diversity.Model, close []Closeness) []Sensitive {
		return []Sensitive{{Column: "dx", Values: []string{"a", "b", "c"}, Reference: []int64{2, 1, 1}, Diversity: models, Closeness: close}}
	}
	base := Spec{K: 2, MaxSuppressed: 0, InputRows: 4, Columns: []string{"zip", "dx"}, Quasi: []string{"zip"}}
	body := "zip,dx\n1,a\n1,b\n2,a\n2,c\n" // classes {a,b} and {a,c}
	for _, c := range []struct {
		name    string
		sens    []Sensitive
		body    string
		wantErr string
	}{
		{"distinct 2 holds", sens([]diversity.Model{{Variant: diversity.Distinct, L: 2}}, nil), body, ""},
		{"distinct 3 fails", sens([]diversity.Model{{Variant: diversity.Distinct, L: 3}}, nil), body, "fails distinct l-diversity"},
		{"homogeneous class", sens([]diversity.Model{{Variant: diversity.Distinct, L: 2}}, nil), "zip,dx\n1,a\n1,a\n2,b\n2,c\n", "fails distinct"},
		// class {a,b}: p = (½,½,0) vs q = (½,¼,¼): equal EMD ¼
		{"t 0.25 holds", sens(nil, []Closeness{{T: 0.25, Distance: closeness.Equal}}), body, ""},
		{"t 0.2 fails", sens(nil, []Closeness{{T: 0.2, Distance: closeness.Equal}}), body, "distance 0.25"},
		{"value the input lacks", sens(nil, nil), "zip,dx\n1,a\n1,zzz\n2,a\n2,c\n", "does not hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := base
			spec.Sensitive = c.sens
			r := csv.NewReader(strings.NewReader(c.body))
			header, _ := r.Read()
			m, err := Release(spec, header, r)
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := m.Sensitive[0]; got.MinDistinct != 2 || math.Abs(got.MaxEMD-0.25) > 1e-12 || math.Abs(got.MinEntropyL-2) > 1e-9 {
					t.Errorf("measured %+v, want distinct 2, entropy l 2, EMD 0.25", got)
				}
				return
			}
			var v *Violation
			if !errors.As(err, &v) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("got %v, want a violation containing %q", err, c.wantErr)
			}
			if strings.Contains(err.Error(), "zzz") {
				t.Errorf("the error quotes a sensitive value: %v", err)
			}
		})
	}
}
