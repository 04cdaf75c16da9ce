package generalize

import (
	"context"
	"errors"
	"fmt"
	"math"

	"sanitizer/fault"
)

// LocalRecoding is ARX's iterative local recoding (ARXResult.optimizeIterative): the
// records the node of the optimal search suppresses are searched again on their own,
// and released at the node that search finds; the records that node suppresses are
// searched again, and so on, each pass under the same models, so that a release holds
// records generalized at several nodes, one per record. A pass's t-closeness and
// β-likeness compare its classes with the whole table's distributions
// (Options.References), never with the pass's records'. Only models decided class by
// class take part (k, l-diversity, t-closeness, β-likeness, the prosecutor's
// profitability), and the release-wide risk models (average risk, records at risk,
// population uniqueness), which every pass decides on its classes together with
// those the passes before it released (Risks.released), suppressing only its own; a
// population and a privacy unit are refused.
//
// With Cells, every pass after the first may only raise some of the first node's
// quasi-identifiers to their top level: a record it places is the first node's
// record with those cells replaced by the top's value ('*' in most hierarchies), a
// cell suppression, not a new generalization.
//
// A class of the release is then any set of records that share their released values,
// whichever pass placed them: a union of classes that each meet the models. It meets
// k, l-diversity, t-closeness, β-likeness and the prosecutor's profitability too: a
// union holds at least the records and the values of its parts, the entropy and the
// distances are concave and convex in the distribution (see models.go), and a larger
// class of the same values is no likelier to be attacked.
type LocalRecoding struct {
	// Iterations bounds the passes after the first (ARX's maxIterations): a pass that
	// places no record counts as one.
	Iterations int
	// GSFactor is the gs-factor of the passes' metric (ARX's gsFactor; ignored by a
	// metric that takes none).
	GSFactor float64
	// Adaption is added to GSFactor after a pass that places no record, and the pass
	// tried again while the factor stays at most 1 (ARX's adaptionFactor; 0, or a
	// metric that takes no gs-factor: stop).
	Adaption float64
	// Limit is the records a pass of n records may suppress: the configured share of
	// n, as the first pass's limit is of the table's records.
	Limit func(n int) int
	// Cells confines the passes after the first to the first node with some
	// quasi-identifiers raised to their top level (cell suppression).
	Cells bool
}

// Placement is what a local recoding releases: per record the pass that places it
// and its class, and what every class releases.
type Placement struct {
	// Nodes are the nodes that place records, in the order of the passes: the first
	// is the optimal search's.
	Nodes [][]int
	// Placed is the records each node places.
	Placed []int
	// Pass is, per record, the index into Nodes of the node that places it (−1:
	// suppressed by every pass).
	Pass []int32
	// Class is, per record, its class (numbered over all passes; −1: suppressed), and
	// Covers what every class releases, at its own node.
	Class  []int32
	Covers ClassCovers
	// Passes is the passes after the first that were searched (those that placed no
	// record included), and Suppressed the records no pass places.
	Passes, Suppressed int
	// Cells is the values replaced by their column's top: per record placed by a
	// pass after the first, the quasi-identifiers its node has at the top where the
	// first node has not (counted with LocalRecoding.Cells or without).
	Cells int64
	// sizes is the records of every class placed, for the risk models' later passes.
	sizes []int32
}

// LocalRecode runs the passes of lr after the optimal search's node first on table t
// under opt (the first pass's options: its metric, gs-factor, models and limit).
func LocalRecode(ctx context.Context, t *Table, opt Options, first []int, lr LocalRecoding) (*Placement, error) {
	if err := checkLocal(opt, lr); err != nil {
		return nil, err
	}
	if t.Unit != nil {
		return nil, fmt.Errorf("local recoding: a privacy unit's persons are not placed pass by pass")
	}
	class, covers, err := NodeClasses(t, first, opt)
	if err != nil {
		return nil, err
	}
	p := &Placement{Pass: make([]int32, t.Rows), Class: make([]int32, t.Rows)}
	rows := p.place(class, covers, first, nil)
	popt := opt
	if popt.References == nil {
		popt.References = make([][]int64, len(t.Sensitive))
		for col := range t.Sensitive {
			popt.References[col] = t.valueCounts(col)
		}
	}
	if lr.Cells {
		popt.choosable = cellNodes(t, first)
	}
	gs, placed := lr.GSFactor, math.MaxInt
	memo := &nodeMemo{} // the records' nodes, while a pass places none and the next searches them again
	for ; p.Passes < lr.Iterations && len(rows) >= minGroup(opt) && placed > 0; p.Passes++ {
		popt.MaxSuppressed, popt.memo = lr.Limit(len(rows)), memo
		if opt.Risks.any() {
			popt.Risks.released = p.sizes
		}
		if opt.Metric.TakesGSFactor() {
			g := gs
			popt.GSFactor = &g
		}
		var left []int
		if left, placed, err = p.pass(ctx, t, rows, popt); err != nil {
			return nil, err
		}
		rows = left
		if placed > 0 {
			memo = &nodeMemo{}
		}
		if placed == 0 && lr.Adaption > 0 && opt.Metric.TakesGSFactor() {
			if gs += lr.Adaption; gs <= 1 {
				placed = math.MaxInt
			}
		}
	}
	p.Suppressed = len(rows)
	p.Cells = p.cells(t)
	return p, nil
}

// cellNodes is the nodes a cell suppression's pass may choose after first: each
// quasi-identifier of t at first's level or at its top.
func cellNodes(t *Table, first []int) func(levels []int) bool {
	return func(levels []int) bool {
		for i, l := range levels {
			if l != first[i] && l != t.Columns[i].Hierarchy.Height()-1 {
				return false
			}
		}
		return true
	}
}

// cells is the values the passes after the first replace by their column's top
// (Placement.Cells), for table t.
func (p *Placement) cells(t *Table) int64 {
	var n int64
	for i := 1; i < len(p.Nodes); i++ {
		raised := 0
		for j, l := range p.Nodes[i] {
			top := t.Columns[j].Hierarchy.Height() - 1
			if l == top && p.Nodes[0][j] != top {
				raised++
			}
		}
		n += int64(raised) * int64(p.Placed[i])
	}
	return n
}

// pass searches the records rows of t on their own under opt and places those its
// node keeps; it returns the rows it leaves suppressed and how many it placed.
func (p *Placement) pass(ctx context.Context, t *Table, rows []int, opt Options) ([]int, int, error) {
	sub, err := t.Select(rows)
	if err != nil {
		return nil, 0, fault.Internalf("local recoding: %w", err)
	}
	res, err := Search(ctx, sub, opt)
	if errors.Is(err, fault.ErrUnattainable) {
		return rows, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	class, covers, err := NodeClasses(sub, res.Levels, opt)
	if err != nil {
		return nil, 0, err
	}
	left := p.place(class, covers, res.Levels, rows)
	return left, len(rows) - len(left), nil
}

// place records the node of levels for the records it places: class and covers are
// NodeClasses's over the records rows of the table (nil: all of them), numbered after
// the classes placed before. It returns the rows the node suppresses.
func (p *Placement) place(class []int32, covers ClassCovers, levels []int, rows []int) []int {
	offset := int32(p.Covers.Classes())
	p.Covers = mergeCovers(p.Covers, covers)
	node := int32(len(p.Nodes))
	var left []int
	placed := 0
	sizes := make([]int32, covers.Classes())
	for k, c := range class {
		r := k
		if rows != nil {
			r = rows[k]
		}
		if c < 0 {
			p.Pass[r], p.Class[r] = -1, -1
			left = append(left, r)
			continue
		}
		p.Pass[r], p.Class[r] = node, offset+c
		sizes[c]++
		placed++
	}
	for _, n := range sizes {
		if n > 0 {
			p.sizes = append(p.sizes, n)
		}
	}
	if placed > 0 {
		p.Nodes = append(p.Nodes, append([]int(nil), levels...))
		p.Placed = append(p.Placed, placed)
	}
	return left
}

// mergeCovers appends the classes of b to a, each distinct released value once per
// column.
func mergeCovers(a, b ClassCovers) ClassCovers {
	if len(a.Dict) == 0 {
		a.Dict = make([][]Cover, len(b.Dict))
	}
	q := len(a.Dict)
	remap := make([][]int32, q)
	for j := range b.Dict {
		at := make(map[Cover]int32, len(a.Dict[j]))
		for x, cv := range a.Dict[j] {
			at[cv] = int32(x)
		}
		remap[j] = make([]int32, len(b.Dict[j]))
		for x, cv := range b.Dict[j] {
			y, ok := at[cv]
			if !ok {
				y = int32(len(a.Dict[j]))
				a.Dict[j] = append(a.Dict[j], cv)
			}
			remap[j][x] = y
		}
	}
	for c := range b.Classes() {
		for j := range q {
			a.Index = append(a.Index, remap[j][b.Index[c*q+j]])
		}
	}
	return a
}

// minGroup is the fewest records a pass can publish a class of: k, and the l of a
// distinct or recursive l-diversity (a class needs l values).
func minGroup(opt Options) int {
	n := max(1, opt.K)
	for _, d := range opt.Diversity {
		n = max(n, int(math.Ceil(d.Model.L)))
	}
	return n
}

// checkLocal rejects options local recoding cannot run with.
func checkLocal(opt Options, lr LocalRecoding) error {
	switch {
	case lr.Iterations < 0:
		return fmt.Errorf("local recoding: %d iterations", lr.Iterations)
	case !(lr.GSFactor >= 0 && lr.GSFactor <= 1) || !(lr.Adaption >= 0 && lr.Adaption <= 1):
		return fmt.Errorf("local recoding: gs-factor %g and adaption %g must lie in [0, 1]", lr.GSFactor, lr.Adaption)
	case lr.Limit == nil:
		return fmt.Errorf("local recoding: no suppression limit")
	case opt.Population != nil:
		return fmt.Errorf("local recoding: a research subset's population models are not decided pass by pass")
	case opt.Linkable:
		return fmt.Errorf("local recoding: linkable records are not placed pass by pass")
	}
	return nil
}
