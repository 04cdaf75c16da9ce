package release

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSelectRows: the rows a batch keeps, as one array: all of them, none, one run,
// several runs, the first and last rows, nulls kept where they were.
func TestSelectRows(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range 10 {
		if i == 4 {
			b.AppendNull()
			continue
		}
		b.Append(int64(i * 10))
	}
	a := b.NewInt64Array()
	defer a.Release()
	for _, tc := range []struct {
		rows []int
		want []int // row of a per value
	}{
		{nil, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{[]int{}, []int{}},
		{[]int{3, 4, 5}, []int{3, 4, 5}},
		{[]int{0, 1, 4, 8, 9}, []int{0, 1, 4, 8, 9}},
		{[]int{9}, []int{9}},
		{[]int{0, 2, 4, 6, 8}, []int{0, 2, 4, 6, 8}},
	} {
		got, err := selectRows(a, tc.rows)
		if err != nil {
			t.Fatal(err)
		}
		g := got.(*array.Int64)
		var rows []int
		for i := range g.Len() {
			switch {
			case g.IsNull(i):
				rows = append(rows, 4)
			default:
				rows = append(rows, int(g.Value(i)/10))
			}
		}
		if g.Len() != len(tc.want) || (len(rows) > 0 && !slices.Equal(rows, tc.want)) {
			t.Errorf("rows %v: got rows %v, want %v", tc.rows, rows, tc.want)
		}
		got.Release()
	}
}
