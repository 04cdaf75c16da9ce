package job

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/schema"
	"sanitizer/table"
)

func parse(t *testing.T, text string) *schema.Config {
	t.Helper()
	cfg, err := schema.Parse([]byte(text), "c.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestNewPlan: the plan gives every input column its role and type, and an input that
// does not match the configuration is bad input naming the file and the column.
func TestNewPlan(t *testing.T) {
	const cfgText = "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n  age: {role: quasi, type: integer, hierarchy: {intervals: [10, 20]}}\n  name: {role: identifier}\n  stay: {role: insensitive, type: integer}\nprivacy: {k: 2}\n"
	text := func(names ...string) []table.Column {
		out := make([]table.Column, len(names))
		for i, n := range names {
			out[i] = table.Column{Name: n}
		}
		return out
	}
	typed := []table.Column{{Name: "name", Type: schema.String}, {Name: "zip", Type: schema.String},
		{Name: "age", Type: schema.Integer, Ints: table.IntType{Bits: 16}, Arrow: arrow.PrimitiveTypes.Int16}, {Name: "stay", Type: schema.Integer}}
	tests := []struct {
		name    string
		cfg     string
		cols    []table.Column
		wantErr []string // nil: no error
		check   func(*testing.T, *Plan)
	}{
		{"csv", cfgText, text("name", "zip", "age", "stay"), nil, func(t *testing.T, p *Plan) {
			if !slices.Equal(p.Quasi, []int{1, 2}) || !slices.Equal(p.Kept, []int{1, 2, 3}) || !p.TextIn {
				t.Errorf("quasi %v kept %v textIn %v", p.Quasi, p.Kept, p.TextIn)
			}
			if !slices.Equal(p.Types, []schema.Type{schema.String, schema.String, schema.Integer, schema.Integer}) || !slices.Equal(p.EmptyNull, []bool{false, false, true, true}) {
				t.Errorf("types %v emptyNull %v", p.Types, p.EmptyNull)
			}
			if got := p.QuasiNames(); !slices.Equal(got, []string{"zip", "age"}) {
				t.Errorf("quasi names %v", got)
			}
			if got := p.ReleaseHeader(); !slices.Equal(got, []string{"zip", "age", "stay"}) {
				t.Errorf("release header %v", got)
			}
		}},
		{"typed", cfgText, typed, nil, func(t *testing.T, p *Plan) {
			if p.TextIn || p.Ints[2].Bits != 16 || !arrow.TypeEqual(p.ArrowTypes[2], arrow.PrimitiveTypes.Int16) {
				t.Errorf("textIn %v ints %v arrow %v", p.TextIn, p.Ints[2], p.ArrowTypes[2])
			}
			out := p.OutColumns()
			if out[1].Type != schema.String || out[1].Arrow != nil || out[2].Type != schema.Integer || !out[2].Nullable || out[0].Nullable {
				t.Errorf("out columns %+v", out)
			}
		}},
		{"no header", cfgText, text("a", "b", "c", "d"), []string{"c.yaml:1: columns: in.csv", "names none of the configured columns"}, nil},
		{"unlisted column", cfgText, text("name", "zip", "age", "stay", "extra"), []string{"c.yaml:1: columns: in.csv", `"extra"`, "unlisted: drop"}, nil},
		{"unlisted dropped", "unlisted: drop\n" + cfgText, text("name", "zip", "age", "stay", "extra"), nil, func(t *testing.T, p *Plan) {
			if p.Conf[4] != nil || slices.Contains(p.Kept, 4) {
				t.Errorf("extra is kept: conf %v kept %v", p.Conf[4], p.Kept)
			}
		}},
		{"missing column", cfgText, text("name", "zip", "age"), []string{"c.yaml:5: columns.stay: in.csv", `"stay"`, "missing"}, nil},
		{"type differs", cfgText, []table.Column{{Name: "name", Type: schema.String}, {Name: "zip", Type: schema.String}, {Name: "age", Type: schema.String}, {Name: "stay", Type: schema.Integer}},
			[]string{"c.yaml:3: columns.age.type: in.csv", `"age"`, "declares type integer", "string"}, nil},
		{"decimal passed through", cfgText, []table.Column{{Name: "name", Type: schema.String}, {Name: "zip", Type: schema.String}, {Name: "age", Type: schema.Integer},
			{Name: "stay", Unsupported: "decimal(9, 2)", PassOnly: true, Arrow: &arrow.Decimal128Type{Precision: 9, Scale: 2}}}, []string{"c.yaml:5: columns.stay.type: in.csv", `"stay"`, "declares type integer"}, nil},
		{"decimal quasi-identifier", cfgText, []table.Column{{Name: "name", Type: schema.String}, {Name: "zip", Unsupported: "binary", PassOnly: true, Arrow: arrow.BinaryTypes.Binary},
			{Name: "age", Type: schema.Integer}, {Name: "stay", Type: schema.Integer}}, []string{"c.yaml:2: columns.zip.role: in.csv", `"zip"`, "binary", "only be passed through", "role insensitive"}, nil},
		{"binary insensitive", testfiles.Replace(t, cfgText, "stay: {role: insensitive, type: integer}", "stay: {role: insensitive}"),
			[]table.Column{{Name: "name", Type: schema.String}, {Name: "zip", Type: schema.String}, {Name: "age", Type: schema.Integer},
				{Name: "stay", Unsupported: "binary", PassOnly: true, Arrow: arrow.BinaryTypes.Binary}}, nil, func(t *testing.T, p *Plan) {
				if !slices.Equal(p.PassOnly, []int{3}) || !slices.Contains(p.Kept, 3) || !arrow.TypeEqual(p.OutColumns()[2].Arrow, arrow.BinaryTypes.Binary) {
					t.Errorf("pass-only %v kept %v out %+v", p.PassOnly, p.Kept, p.OutColumns()[2])
				}
			}},
		{"unit not released", testfiles.Replace(t, cfgText, "privacy: {k: 2}", "privacy: {k: 2, privacy-unit: {column: name}}"), typed, nil, func(t *testing.T, p *Plan) {
			if p.PseudonymAt() != -1 || slices.Contains(p.Kept, 0) || !slices.Equal(p.ReleaseHeader(), []string{"zip", "age", "stay"}) {
				t.Errorf("pseudonym at %d, kept %v, header %v", p.PseudonymAt(), p.Kept, p.ReleaseHeader())
			}
		}},
		{"unit as pseudonym", testfiles.Replace(t, cfgText, "privacy: {k: 2}", "privacy: {k: 2, privacy-unit: {column: name, pseudonym: {}}}"),
			[]table.Column{{Name: "zip", Type: schema.String}, {Name: "name", Type: schema.Integer, Ints: table.IntType{Bits: 64}, Arrow: arrow.PrimitiveTypes.Int64},
				{Name: "age", Type: schema.Integer}, {Name: "stay", Type: schema.Integer}}, nil, func(t *testing.T, p *Plan) {
				// kept at its place among the input's columns, a string column that holds no null
				if p.PseudonymAt() != 1 || !slices.Equal(p.Kept, []int{0, 1, 2, 3}) || !slices.Equal(p.ReleaseHeader(), []string{"zip", "name", "age", "stay"}) {
					t.Errorf("pseudonym at %d, kept %v, header %v", p.PseudonymAt(), p.Kept, p.ReleaseHeader())
				}
				if out := p.OutColumns()[1]; out.Name != "name" || out.Type != schema.String || out.Arrow != nil || out.Ints != (table.IntType{}) || out.Nullable {
					t.Errorf("the pseudonym's out column %+v", out)
				}
			}},
		{"unreadable kept", cfgText, []table.Column{{Name: "name", Unsupported: "binary"}, {Name: "zip", Type: schema.String}, {Name: "age", Type: schema.Integer}, {Name: "stay", Unsupported: "binary"}},
			[]string{"c.yaml:5: columns.stay.role: in.csv", `"stay"`, "binary", "cannot be read"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(parse(t, tc.cfg), "in.csv", tc.cols)
			if tc.wantErr != nil {
				if !errors.Is(err, fault.ErrBadInput) {
					t.Fatalf("got %v, want bad input", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, p)
			if got := p.At(4); got != "in.csv: row 5" {
				t.Errorf("At(4) = %q", got)
			}
		})
	}
}

// TestCheckColumns: every column the input does not match is reported at once, in the
// order of the configuration's lines, and the configured columns at fault are named.
func TestCheckColumns(t *testing.T) {
	cfg := parse(t, "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n  age: {role: quasi, type: integer, hierarchy: {intervals: [10, 20]}}\n  name: {role: identifier}\n  stay: {role: insensitive, type: integer}\nprivacy: {k: 2}\n")
	cols := []table.Column{{Name: "name", Type: schema.String}, {Name: "zip", Unsupported: "binary", PassOnly: true}, {Name: "age", Type: schema.String}, {Name: "extra", Type: schema.String}}
	faulty, err := CheckColumns(cfg, "in.csv", cols)
	if !errors.Is(err, fault.ErrBadInput) {
		t.Fatalf("got %v, want bad input", err)
	}
	want := []string{`c.yaml:1: columns: in.csv: column "extra" is not in the configuration`, `c.yaml:2: columns.zip.role: in.csv: column "zip"`,
		`c.yaml:3: columns.age.type: in.csv: column "age"`, `c.yaml:5: columns.stay: in.csv: configured column "stay" is missing`}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("errors:\n%s\nwant %d", err, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("error %d: %q, want %q…", i, got[i], w)
		}
	}
	if slices.Sort(faulty); !slices.Equal(faulty, []string{"age", "stay", "zip"}) {
		t.Errorf("faulty %v, want age, stay, zip", faulty)
	}
	if _, err := NewPlan(cfg, "in.csv", cols); err == nil || err.Error() != strings.Join(got, "\n") {
		t.Errorf("NewPlan: %v, want CheckColumns's error", err)
	}
}

// TestProgressNil: a nil Progress counts nothing and says no stage.
func TestProgressNil(t *testing.T) {
	var p *Progress
	p.Enter(StageRead)
	p.AddRead(3)
	p.AddWritten(2)
	p.AddEvaluated(1)
	if p.Stage() != "" {
		t.Error("a nil Progress has a stage")
	}
	q := &Progress{}
	q.Enter(StageWrite)
	q.AddWritten(2)
	if q.Stage() != StageWrite || q.Written.Load() != 2 {
		t.Errorf("stage %q written %d", q.Stage(), q.Written.Load())
	}
}
