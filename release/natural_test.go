package release

import (
	"slices"
	"testing"
)

// TestNaturalCompare: numbers within labels sort as numbers, text as text, and labels
// equal as numbers ("01", "1") still in a fixed order.
func TestNaturalCompare(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"[10,14]", "[5,9]", "[100,104]", "[0,4]"}, []string{"[0,4]", "[5,9]", "[10,14]", "[100,104]"}},
		{[]string{"027**", "021**", "*"}, []string{"*", "021**", "027**"}},
		{[]string{"b", "a10", "a9", "a", ""}, []string{"", "a", "a9", "a10", "b"}},
		{[]string{"1", "01", "001"}, []string{"001", "01", "1"}},
		{[]string{"2020-03-01", "2020-10-01", "2019-12-31"}, []string{"2019-12-31", "2020-03-01", "2020-10-01"}},
	} {
		got := slices.Clone(tt.in)
		slices.SortFunc(got, naturalCompare)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q sorted %q, want %q", tt.in, got, tt.want)
		}
		for _, a := range tt.in {
			for _, b := range tt.in {
				if naturalCompare(a, b) != -naturalCompare(b, a) || (naturalCompare(a, b) == 0) != (a == b) {
					t.Errorf("naturalCompare(%q, %q) = %d, (%q, %q) = %d", a, b, naturalCompare(a, b), b, a, naturalCompare(b, a))
				}
			}
		}
	}
}

// TestKeepFirst: the values kept, whatever their order, are the first examplesShown
// of all of them in natural order.
func TestKeepFirst(t *testing.T) {
	all := []string{"[40,49]", "[5,9]", "[100,109]", "[0,4]", "[10,14]", "*", "[20,29]", "[15,19]"}
	want := slices.Clone(all)
	slices.SortFunc(want, naturalCompare)
	want = want[:examplesShown]
	for shift := range all {
		var kept []string
		for i := range all {
			kept = keepFirst(kept, all[(i+shift)%len(all)])
		}
		if !slices.Equal(kept, want) {
			t.Errorf("shift %d: kept %q, want %q", shift, kept, want)
		}
	}
}
