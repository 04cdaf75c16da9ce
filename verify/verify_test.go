package verify

import (
	"encoding/csv"
	"errors"
	"strings"
	"testing"
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
