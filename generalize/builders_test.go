package generalize

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// levels returns the values of every level of leaf value v (level 0 excluded).
func levels(t *testing.T, h *Hierarchy, v string) []string {
	t.Helper()
	leaf, ok := h.Leaf(v)
	if !ok {
		t.Fatalf("leaf %q missing", v)
	}
	var out []string
	for l := 1; l < h.Height(); l++ {
		out = append(out, h.Value(l, h.Code(l, leaf)))
	}
	return out
}

// checkBuilt checks the leaves are values in order and the hierarchy is consistent.
func checkBuilt(t *testing.T, h *Hierarchy, values []string, height int) {
	t.Helper()
	if h.Height() != height || h.Leaves() != len(values) {
		t.Fatalf("Height, Leaves = %d, %d; want %d, %d", h.Height(), h.Leaves(), height, len(values))
	}
	for i, v := range values {
		if leaf, ok := h.Leaf(v); !ok || leaf != int32(i) {
			t.Errorf("Leaf(%q) = %d, %v; want %d", v, leaf, ok, i)
		}
	}
	checkConsistent(t, h)
}

func TestBuildIntervals(t *testing.T) {
	tests := []struct {
		name   string
		typ    schema.Type
		widths []float64
		want   map[string][]string // value -> levels 1..top
	}{
		{
			name: "integers", typ: schema.Integer, widths: []float64{5, 10, 20},
			want: map[string][]string{
				"0":   {"[0,4]", "[0,9]", "[0,19]", "*"},
				"4":   {"[0,4]", "[0,9]", "[0,19]", "*"},
				"5":   {"[5,9]", "[0,9]", "[0,19]", "*"},
				"37":  {"[35,39]", "[30,39]", "[20,39]", "*"},
				"-3":  {"[-5,-1]", "[-10,-1]", "[-20,-1]", "*"},
				"-5":  {"[-5,-1]", "[-10,-1]", "[-20,-1]", "*"},
				"-6":  {"[-10,-6]", "[-10,-1]", "[-20,-1]", "*"},
				"-20": {"[-20,-16]", "[-20,-11]", "[-20,-1]", "*"},
				"-21": {"[-25,-21]", "[-30,-21]", "[-40,-21]", "*"},
				"+8":  {"[5,9]", "[0,9]", "[0,19]", "*"},
				"007": {"[5,9]", "[0,9]", "[0,19]", "*"},
			},
		},
		{
			name: "integer width 1", typ: schema.Integer, widths: []float64{1, 3},
			want: map[string][]string{
				"-1": {"[-1,-1]", "[-3,-1]", "*"},
				"2":  {"[2,2]", "[0,2]", "*"},
			},
		},
		{
			name: "integer extremes", typ: schema.Integer, widths: []float64{10},
			want: map[string][]string{
				"9223372036854775807":  {"[9223372036854775800,9223372036854775809]", "*"},
				"-9223372036854775808": {"[-9223372036854775810,-9223372036854775801]", "*"},
				"9223372036854775790":  {"[9223372036854775790,9223372036854775799]", "*"},
			},
		},
		{
			name: "no widths", typ: schema.Integer, widths: nil,
			want: map[string][]string{"1": {"*"}, "2": {"*"}},
		},
		{
			name: "floats", typ: schema.Float, widths: []float64{0.5, 1, 10},
			want: map[string][]string{
				"1.5":    {"[1.5,2)", "[1,2)", "[0,10)", "*"},
				"1.49":   {"[1,1.5)", "[1,2)", "[0,10)", "*"},
				"-0.25":  {"[-0.5,0)", "[-1,0)", "[-10,0)", "*"},
				"-0":     {"[0,0.5)", "[0,1)", "[0,10)", "*"},
				"10":     {"[10,10.5)", "[10,11)", "[10,20)", "*"},
				"-10":    {"[-10,-9.5)", "[-10,-9)", "[-10,0)", "*"},
				"1e1":    {"[10,10.5)", "[10,11)", "[10,20)", "*"},
				"99.999": {"[99.5,100)", "[99,100)", "[90,100)", "*"},
			},
		},
		{
			// 0.1 and 0.3 are not exact in binary: bounds are the decimals, and a
			// value that parses to a bound lies in the interval it opens.
			name: "decimal widths", typ: schema.Float, widths: []float64{0.1, 0.3},
			want: map[string][]string{
				"0.3":  {"[0.3,0.4)", "[0.3,0.6)", "*"},
				"0.25": {"[0.2,0.3)", "[0,0.3)", "*"},
				"0.6":  {"[0.6,0.7)", "[0.6,0.9)", "*"},
				"0.7":  {"[0.7,0.8)", "[0.6,0.9)", "*"},
				"-0.1": {"[-0.1,0)", "[-0.3,0)", "*"},
				"1.1":  {"[1.1,1.2)", "[0.9,1.2)", "*"},
			},
		},
		{
			name: "float large width", typ: schema.Float, widths: []float64{1e20},
			want: map[string][]string{
				"3e20": {"[300000000000000000000,400000000000000000000)", "*"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var values []string
			for v := range tc.want {
				values = append(values, v)
			}
			h, err := BuildIntervals("age", values, tc.typ, tc.widths)
			if err != nil {
				t.Fatal(err)
			}
			checkBuilt(t, h, values, len(tc.widths)+2)
			checkIntervals(t, h, values, tc.typ)
			if h.Source() != "age" {
				t.Errorf("Source = %q", h.Source())
			}
			for v, want := range tc.want {
				if got := levels(t, h, v); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s: got %q, want %q", v, got, want)
				}
			}
		})
	}
}

// checkIntervals checks that every value lies in the interval of every level.
func checkIntervals(t *testing.T, h *Hierarchy, values []string, typ schema.Type) {
	t.Helper()
	for i, v := range values {
		for l := 1; l < h.Height()-1; l++ {
			iv := h.Value(l, h.Code(l, int32(i)))
			lo, hi, ok := strings.Cut(iv[1:len(iv)-1], ",")
			if !ok {
				t.Fatalf("level %d of %q: %q is not an interval", l, v, iv)
			}
			switch typ {
			case schema.Integer:
				x, _ := strconv.ParseInt(v, 10, 64)
				// bounds may lie beyond int64 near its ends
				a, errA := strconv.ParseInt(lo, 10, 64)
				b, errB := strconv.ParseInt(hi, 10, 64)
				if iv[0] != '[' || iv[len(iv)-1] != ']' || (errA == nil && a > x) || (errB == nil && b < x) {
					t.Errorf("%s not in %s", v, iv)
				}
			case schema.Float:
				x, _ := strconv.ParseFloat(v, 64)
				a, errA := strconv.ParseFloat(lo, 64)
				b, errB := strconv.ParseFloat(hi, 64)
				if iv[0] != '[' || iv[len(iv)-1] != ')' || errA != nil || errB != nil || !(a <= x && x < b) {
					t.Errorf("%s not in %s", v, iv)
				}
			}
		}
	}
}

// wantValueError checks err is a *ValueError for index i, matches ErrBadInput and
// does not repeat the value.
func wantValueError(t *testing.T, err error, i int, value string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var ve *ValueError
	if !errors.As(err, &ve) {
		t.Fatalf("%v: not a *ValueError", err)
	}
	if ve.Index != i {
		t.Errorf("Index = %d, want %d", ve.Index, i)
	}
	if !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("%v does not match fault.ErrBadInput", err)
	}
	if value != "" && strings.Contains(err.Error(), value) {
		t.Errorf("error %q repeats the value %q", err, value)
	}
}

func TestBuildIntervalsValueErrors(t *testing.T) {
	tests := []struct {
		name   string
		typ    schema.Type
		widths []float64
		values []string
		index  int
	}{
		{"not an integer", schema.Integer, []float64{5}, []string{"1", "secret12x"}, 1},
		{"decimal for integer", schema.Integer, []float64{5}, []string{"1.5"}, 0},
		{"empty integer", schema.Integer, []float64{5}, []string{"1", "2", ""}, 2},
		{"spaces", schema.Integer, []float64{5}, []string{" 17"}, 0},
		{"integer overflow", schema.Integer, []float64{5}, []string{"9223372036854775808"}, 0},
		{"integer duplicate", schema.Integer, []float64{5}, []string{"17", "3", "17"}, 2},
		{"NaN", schema.Float, []float64{1}, []string{"1", "NaN"}, 1},
		{"Inf", schema.Float, []float64{1}, []string{"+Inf"}, 0},
		{"float overflow", schema.Float, []float64{1}, []string{"1e999"}, 0},
		{"not a float", schema.Float, []float64{1}, []string{"1,5"}, 0},
		{"float duplicate", schema.Float, []float64{1}, []string{"0.5", "0.5"}, 1},
		{"NaN without widths", schema.Float, nil, []string{"nan"}, 0},
		{"width below precision", schema.Float, []float64{1e-300}, []string{"0", "1e300"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildIntervals("col", tc.values, tc.typ, tc.widths)
			v := tc.values[tc.index]
			if len(v) < 3 {
				v = "" // too short to check it is not repeated
			}
			wantValueError(t, err, tc.index, v)
		})
	}
}

func TestBuildIntervalsConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		typ    schema.Type
		widths []float64
		msg    string
	}{
		{"not nested", schema.Integer, []float64{5, 12}, "nest"},
		{"not nested float", schema.Float, []float64{0.1, 0.25}, "nest"},
		{"shrinking", schema.Integer, []float64{10, 5}, "nest"},
		{"zero", schema.Integer, []float64{0}, "≥ 1"},
		{"fraction for integers", schema.Integer, []float64{2.5}, "whole"},
		{"negative", schema.Float, []float64{-1}, "positive"},
		{"NaN width", schema.Float, []float64{math.NaN()}, "positive"},
		{"Inf width", schema.Float, []float64{math.Inf(1)}, "positive"},
		{"string type", schema.String, []float64{5}, "type"},
		{"date type", schema.Date, []float64{5}, "type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildIntervals("age", []string{"1", "2"}, tc.typ, tc.widths)
			if err == nil || !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "age: ") {
				t.Errorf("err = %v; want bad input about %q", err, tc.msg)
			}
			var ve *ValueError
			if errors.As(err, &ve) {
				t.Errorf("configuration error reported as a value error: %v", err)
			}
		})
	}
	for _, b := range []func([]string) error{
		func(v []string) error { _, err := BuildIntervals("c", v, schema.Integer, []float64{5}); return err },
		func(v []string) error { _, err := BuildMask("c", v, schema.Mask{Max: 1}); return err },
		func(v []string) error { _, err := BuildDate("c", v, []schema.DateUnit{"year"}); return err },
	} {
		if err := b(nil); err == nil || !errors.Is(err, fault.ErrBadInput) {
			t.Errorf("no values: err = %v", err)
		}
	}
}

func TestBuildMask(t *testing.T) {
	tests := []struct {
		name string
		m    schema.Mask
		want map[string][]string
	}{
		{
			name: "from right", m: schema.Mask{FromRight: true, Max: 3},
			want: map[string][]string{
				"02139": {"0213*", "021**", "02***", "*"},
				"02138": {"0213*", "021**", "02***", "*"},
				"123":   {"12*", "1**", "***", "*"},
				"12":    {"1*", "**", "**", "*"},
				"":      {"", "", "", "*"},
				"ab€d":  {"ab€*", "ab**", "a***", "*"},
				"ab€":   {"ab*", "a**", "***", "*"},
				"a*":    {"a*", "**", "**", "*"},
				"**":    {"**", "**", "**", "*"},
			},
		},
		{
			name: "from left", m: schema.Mask{FromRight: false, Max: 2},
			want: map[string][]string{
				"02139": {"*2139", "**139", "*"},
				"é1":    {"*1", "**", "*"},
				"x":     {"*", "*", "*"},
			},
		},
		{
			name: "invalid UTF-8 counts bytes", m: schema.Mask{FromRight: true, Max: 2},
			want: map[string][]string{
				"a\xffb":   {"a\xff*", "a**", "*"},
				"\xe2\x82": {"\xe2*", "**", "*"},
			},
		},
		{
			name: "max 0", m: schema.Mask{FromRight: true, Max: 0},
			want: map[string][]string{"a": {"*"}, "b": {"*"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var values []string
			for v := range tc.want {
				values = append(values, v)
			}
			h, err := BuildMask("zip", values, tc.m)
			if err != nil {
				t.Fatal(err)
			}
			checkBuilt(t, h, values, tc.m.Max+2)
			for v, want := range tc.want {
				if got := levels(t, h, v); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%q: got %q, want %q", v, got, want)
				}
			}
		})
	}
	if _, err := BuildMask("zip", []string{"1"}, schema.Mask{Max: -1}); err == nil || !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("negative max: err = %v", err)
	}
	_, err := BuildMask("zip", []string{"02139", "02138", "02139"}, schema.Mask{Max: 2})
	wantValueError(t, err, 2, "02139")
}

func TestBuildDate(t *testing.T) {
	values := []string{"2023-04-15", "2023-06-30", "2023-07-01", "2019-12-31", "2020-01-01", "2024-02-29", "0999-01-01"}
	tests := []struct {
		levels []schema.DateUnit
		want   map[string][]string
	}{
		{
			levels: []schema.DateUnit{"month", "quarter", "year", "decade"},
			want: map[string][]string{
				"2023-04-15": {"2023-04", "2023-Q2", "2023", "[2020,2029]", "*"},
				"2023-06-30": {"2023-06", "2023-Q2", "2023", "[2020,2029]", "*"},
				"2023-07-01": {"2023-07", "2023-Q3", "2023", "[2020,2029]", "*"},
				"2019-12-31": {"2019-12", "2019-Q4", "2019", "[2010,2019]", "*"},
				"2020-01-01": {"2020-01", "2020-Q1", "2020", "[2020,2029]", "*"},
				"2024-02-29": {"2024-02", "2024-Q1", "2024", "[2020,2029]", "*"},
				"0999-01-01": {"0999-01", "0999-Q1", "0999", "[990,999]", "*"},
			},
		},
		{
			levels: []schema.DateUnit{"month", "year", "decade"},
			want: map[string][]string{
				"2023-04-15": {"2023-04", "2023", "[2020,2029]", "*"},
				"2019-12-31": {"2019-12", "2019", "[2010,2019]", "*"},
			},
		},
		{
			levels: []schema.DateUnit{"quarter", "decade"},
			want: map[string][]string{
				"2023-06-30": {"2023-Q2", "[2020,2029]", "*"},
			},
		},
		{
			levels: nil,
			want:   map[string][]string{"2023-06-30": {"*"}},
		},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.levels), func(t *testing.T) {
			h, err := BuildDate("admitted", values, tc.levels)
			if err != nil {
				t.Fatal(err)
			}
			checkBuilt(t, h, values, len(tc.levels)+2)
			for v, want := range tc.want {
				if got := levels(t, h, v); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s: got %q, want %q", v, got, want)
				}
			}
		})
	}
}

func TestBuildDateErrors(t *testing.T) {
	for _, bad := range []string{"2023-02-29", "2023-13-01", "2023-4-15", "20230415", "2023-04-15T00:00:00Z", "15/04/2023", "", "2023-04-15 ", "+2023-04-15"} {
		_, err := BuildDate("d", []string{"2023-01-01", bad}, []schema.DateUnit{"month"})
		v := bad
		if len(v) < 3 {
			v = ""
		}
		wantValueError(t, err, 1, v)
	}
	_, err := BuildDate("d", []string{"2023-01-01", "2023-01-01"}, []schema.DateUnit{"month"})
	wantValueError(t, err, 1, "2023-01-01")
	for _, lv := range [][]schema.DateUnit{{"year", "month"}, {"month", "month"}, {"week"}, {"Month"}, {"decade", "year"}} {
		_, err := BuildDate("d", []string{"2023-01-01"}, lv)
		if err == nil || !errors.Is(err, fault.ErrBadInput) {
			t.Errorf("levels %q: err = %v", lv, err)
		}
		var ve *ValueError
		if errors.As(err, &ve) {
			t.Errorf("levels %q reported as a value error", lv)
		}
	}
}

func TestValueErrorMessage(t *testing.T) {
	err := error(&ValueError{Index: 4, Msg: "not an ISO date (YYYY-MM-DD)"})
	if got := err.Error(); got != "value at index 4: not an ISO date (YYYY-MM-DD)" {
		t.Errorf("Error() = %q", got)
	}
}
