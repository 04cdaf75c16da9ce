package schema

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"sanitizer/fault"
)

// TestParseReportsEveryMistake: a configuration with several independent mistakes
// yields all of them, one a line, in the order of their lines, each "FILE:LINE: key:
// message"; a mistake that makes what depends on it meaningless is reported once.
func TestParseReportsEveryMistake(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // "LINE: key.path: part of the message", in order
	}{
		{"three sections", `privacy:
  k: 0
  l-diversity: {column: stay, variant: distinct, l: 2}
columns:
  id: {role: identifier}
  age: {role: quasi, type: integer, hierarchy: {intervals: [5]}, colour: red}
  stay: {role: insensitive, type: integer}
`, []string{
			`2: privacy.k: must be at least 1, got 0`,
			`3: privacy.l-diversity.column: column "stay" is not sensitive`,
			`6: columns.age.colour: unknown key`,
		}},
		{"every column and section", `dataset: [a]
unlisted: keep
input: {format: xlsx, csv: {separator: ''}}
columns:
  a: {role: quasi, hierarchy: {mask: {max: 0}}}
  b: {role: quasy}
  c: {role: sensitive, domain: {range: [3, 1], width: 1}}
search: {algorithm: greedy, metric: loss, weights: {c: 1}}
risk: {population: 0}
dp:
  epsilon-total: -1
  outputs:
    - {name: x, epsilon: 0, histogram: [a]}
    - {name: y, epsilon: 1, histogram: [z]}
`, []string{
			`1: dataset: expected a name`,
			`2: unlisted: must be one of error, drop`,
			`3: input.format: must be one of`,
			`3: input.csv.separator: must not be empty`,
			`5: columns.a.hierarchy.mask.max: must be at least 1`,
			`6: columns.b.role: must be one of`,
			`7: columns.c.domain.range: lo must be less than hi`,
			`8: search.algorithm: must be one of optimal, mondrian`,
			`8: search.weights.c: column "c" is not a quasi-identifier`,
			`9: risk.population: must be at least 1`,
			`11: dp.epsilon-total: must be positive`,
			`13: dp.outputs[0].epsilon: must be at least`,
			`14: dp.outputs[1].histogram[0]: unknown column "z"`,
		}},
		{"what refers to a column in error", `columns:
  d: {role: sensitve}
  q: {role: quasi, type: text, hierarchy: {mask: {max: 1}}}
privacy:
  k: 2
  l-diversity: {column: d, variant: distinct, l: 2}
  t-closeness: {column: d, t: -1}
search: {min-levels: {q: 1}}
dp: {epsilon-total: 1, outputs: [{name: o, epsilon: 1, histogram: [d, q]}]}
`, []string{
			`2: columns.d.role: must be one of`,
			`3: columns.q.type: must be one of`,
			`7: privacy.t-closeness.t: must be at least 0`,
		}},
		{"a section of the wrong type stops only itself", `privacy: 5
search: {metric: prec, gs-factor: 2}
columns: {x: {role: identifier}}
dp: [1]
`, []string{
			`1: privacy: expected a mapping, got integer 5`,
			`2: search.metric: must be one of`,
			`4: dp: expected a mapping, got a list`,
		}},
		{"columns in error", `columns: [a, b]
privacy: {k: 2, l-diversity: {column: a, variant: distinct, l: 2}, suppression: 2}
`, []string{
			`1: columns: expected a mapping, got a list`,
			`2: privacy.suppression: must be between 0 and 1`,
		}},
		{"YAML that does not parse", "columns: {a: {role: x}\nprivacy: {k: 0}\n", []string{
			`1: syntax error`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), "m.yaml", "")
			if cfg != nil || !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("Parse = %v, %v; want bad input", cfg, err)
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("%d errors, want %d:\n%s", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], "m.yaml:") || !strings.Contains(got[i], w) {
					t.Errorf("error %d is %q, want m.yaml:%s", i, got[i], w)
				}
			}
			var list *ErrorList
			if errors.As(err, &list) != (len(tt.want) > 1) {
				t.Errorf("%T: an ErrorList when there are several errors, the error itself when one", err)
			}
		})
	}
}

// TestErrorListCap: past MaxListed errors the message says how many more there are.
func TestErrorListCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("columns:\n  x: {role: identifier}\nsearch:\n")
	const n = MaxListed + 7
	for i := range n {
		fmt.Fprintf(&b, "  k%d: 1\n", i)
	}
	_, err := Parse([]byte(b.String()), "c.yaml", "")
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != MaxListed+1 || lines[MaxListed] != "and 7 more" {
		t.Fatalf("%d lines, last %q; want %d errors and \"and 7 more\"", len(lines), lines[len(lines)-1], MaxListed)
	}
	for i, l := range lines[:MaxListed] {
		if want := fmt.Sprintf("c.yaml:%d: search.k%d: unknown key", i+4, i); !strings.HasPrefix(l, want) {
			t.Errorf("line %d: %q, want %q", i, l, want)
		}
	}
	var list *ErrorList
	if !errors.As(err, &list) || list.Len() != n || !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("%T holds %v errors, want an ErrorList of %d bad inputs", err, list, n)
	}
}

// TestErrorListOrder: errors are listed by line, those without one last, in the order
// they were added.
func TestErrorListOrder(t *testing.T) {
	var l ErrorList
	if l.Err() != nil {
		t.Fatal("an empty list is an error")
	}
	l.Add(fault.BadInput("no line 1"))
	l.Add(&positioned{9, fault.BadInput("f:9: b")})
	var inner ErrorList
	inner.Add(&positioned{3, fault.BadInput("f:3: a")})
	inner.Add(fault.BadInput("no line 2"))
	inner.Add(&positioned{9, fault.BadInput("f:9: c")})
	l.Add(inner.Err())
	l.Add(nil)
	want := "f:3: a\nf:9: b\nf:9: c\nno line 1\nno line 2"
	if got := l.Err().Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestWhere: a configuration key's place is the line of the key, or of the nearest key
// above it the file gives; a requirement's key path is its place in a list.
func TestWhere(t *testing.T) {
	src := `columns:
  age:
    role: quasi
    type: integer
    hierarchy:
      intervals: [5, 10]
  sex: {role: quasi, hierarchy: {file: sex.csv}}
  d: {role: sensitive}
  e: {role: sensitive}
privacy:
  l-diversity:
    - {column: d, variant: distinct, l: 2}
    - column: e
      variant: distinct
      l: 3
  t-closeness: {column: d, t: 0.2}
`
	cfg, err := Parse([]byte(src), "w.yaml", "/x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{"columns.age.hierarchy.intervals", "w.yaml:6: columns.age.hierarchy.intervals"},
		{"columns.age.hierarchy", "w.yaml:5: columns.age.hierarchy"},
		{"columns.sex.hierarchy.file", "w.yaml:7: columns.sex.hierarchy.file"},
		{"columns.sex.null-as", "w.yaml:7: columns.sex.null-as"}, // not given: its column
		{cfg.RequirementKey("l-diversity", "e") + ".l", "w.yaml:15: privacy.l-diversity[1].l"},
		{cfg.RequirementKey("l-diversity", "d"), "w.yaml:12: privacy.l-diversity[0]"},
		{cfg.RequirementKey("t-closeness", "d") + ".t", "w.yaml:16: privacy.t-closeness.t"},
		{"search.metric", "w.yaml: search.metric"}, // a default of a section not given
	} {
		if got := cfg.Where(tt.path); got != tt.want {
			t.Errorf("Where(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	err = cfg.Errorf("columns.age.type", "holds %s", "text")
	if !errors.Is(err, fault.ErrBadInput) || err.Error() != "w.yaml:4: columns.age.type: holds text" {
		t.Errorf("Errorf = %v", err)
	}
	internal := errors.New("internal")
	if err := cfg.Wrap("columns.sex.hierarchy.file", internal); !errors.Is(err, internal) || errors.Is(err, fault.ErrBadInput) {
		t.Errorf("Wrap changed the kind of %v", err)
	}
	var none Config
	if got := none.Where("privacy.k"); got != "configuration: privacy.k" {
		t.Errorf("Where without a file = %q", got)
	}
}
