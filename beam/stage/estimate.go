package stage

import (
	"fmt"
	"log/slog"
	"math"
	"unicode/utf8"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/schema"
	"sanitizer/table"
)

// The merged class table is what the search holds on one machine, and Job.MaxClassTable
// bounds it. It is counted at the quasi-identifiers' minimum levels (search.min-levels,
// the job's cut), so that a value below them is never one of its classes' keys: what
// follows counts values at those levels. The merge refuses a table past the bound as it grows, one part at a time
// (mergeFn): that check is exact, but it comes after every part has been read and
// counted on the workers. Before the count runs, the driver knows enough to bound the
// table's size from both sides without reading a record (Estimate):
//
//   - from below: every value the Values stage gathered of a quasi-identifier whose
//     hierarchy is built from them is some counted record's value, so the table has at
//     least as many classes as the column with the most such values has values at its
//     minimum level among them; and a protected sensitive column's histograms hold at least one entry per
//     class and one per value present (its values are gathered alike). With a research
//     subset, only the population's table (every record's quasi-identifiers) has that
//     bound: the subset's records may hold few of the values.
//   - from above: at most one class per record and at most one per combination of the
//     quasi-identifiers' values at their minimum levels, at most one histogram entry per record and per class
//     and value. The records are bounded by the parts' footers (Parquet, Arrow IPC file:
//     exact) or sizes (CSV: each record takes at least its separators, its line end and
//     the shortest value each of its quasi-identifiers and protected sensitive columns
//     may hold); an Arrow IPC stream gives no bound, and the leaves alone bound it then.
//
// The run is refused up front only when the lower bound is past MaxClassTable: then
// the merge would certainly refuse the table, and refusing now saves reading and
// counting every part for nothing. An upper bound past MaxClassTable proves nothing
// (the bound from above is loose: a record per class is the worst case, not the usual
// one, and a CSV part's size overstates its records), and refusing on it would refuse
// runs that fit; the run goes on with a warning on stderr, and the merge's exact check
// decides.
//
// With a privacy unit the class table holds entries, one per class and person, each
// with the person's code beside the quasi-identifiers: at least one per person the
// Persons stage numbered (each has a record), at most one per record and per
// combination and person.

// Estimate bounds the memory of the merged class tables (generalize.ClassTable.Bytes)
// before they are counted.
type Estimate struct {
	// Records bounds the input's records, every part's (those outside a research
	// subset too); −1 when some part's format gives no bound (an Arrow IPC stream).
	Records int64
	// Classes bounds the class table the search takes; Population, with a research
	// subset, its population's (zero without one).
	Classes, Population Bounds
	// Widest is the quasi-identifier with the most distinct values gathered at its
	// minimum level (Level), Values their number: what the lower bounds rest on
	// (empty: no quasi-identifier's values are gathered, its hierarchy being a file).
	Widest string
	Level  int
	Values int64
}

// Bounds is the bytes a class table takes at least and at most.
type Bounds struct {
	AtLeast, AtMost int64
}

// estimate bounds the class tables of the records of parts under job (its values
// gathered) before they are counted: like and in are the job's table and sensitive
// numbering (Job.table).
func estimate(cfg *schema.Config, j Job, like *generalize.Table, in *input, parts []string) (Estimate, error) {
	var est Estimate
	q := int64(len(like.Columns)) // the population's key columns: the quasi-identifiers
	keys := q                     // the class table's: and a unit's person
	if like.Unit != nil {
		keys++
	}
	levels := in.cut.Levels()
	combinations := int64(1) // of the quasi-identifiers' values at the cut
	for i, c := range like.Columns {
		h := c.Hierarchy
		combinations = mulSat(combinations, int64(h.Size(levels[i])))
		values, ok := j.Values[c.Name]
		if !ok {
			continue
		}
		seen := map[int32]bool{} // values at the cut
		for _, v := range values {
			if leaf, ok := h.Leaf(v); ok {
				seen[h.Code(levels[i], leaf)] = true
			}
		}
		if n := int64(len(seen)); n > est.Values {
			est.Widest, est.Level, est.Values = c.Name, levels[i], n
		}
	}
	var err error
	if est.Records, err = recordsAtMost(cfg, j, like, parts); err != nil {
		return est, err
	}
	atMost := func(n int64) int64 { // n, or the records when fewer
		if est.Records >= 0 {
			return min(n, est.Records)
		}
		return n
	}
	popCombinations := combinations // the population's classes: no unit
	if like.Unit != nil {           // entries, one per class and person
		combinations = mulSat(combinations, int64(like.Unit.Persons))
	}
	classesHi := atMost(combinations)
	// bytes is generalize.ClassTable.Bytes of a table of c classes (entries, with a
	// unit) of k key columns whose sensitive columns' histograms hold e[k] entries.
	bytes := func(k, c int64, e []int64) int64 {
		b := mulSat(c, 4*(k+1))
		for _, n := range e {
			b = addSat(b, addSat(mulSat(addSat(c, 1), 4), mulSat(n, 8)))
		}
		return b
	}
	subset := cfg.Privacy.Subset != nil
	var classesLo int64 // the classes of the records counted, at least
	if !subset {
		classesLo = est.Values
		if like.Unit != nil { // every person has an entry
			classesLo = max(classesLo, int64(like.Unit.Persons))
		}
	}
	lo, hi := make([]int64, len(like.Sensitive)), make([]int64, len(like.Sensitive))
	for k, s := range like.Sensitive {
		present := map[int32]bool{} // the numbers of the values gathered: each a counted record's
		for _, x := range in.index[k] {
			present[x] = true
		}
		lo[k] = classesLo
		if !subset {
			lo[k] = max(classesLo, int64(len(present)))
		}
		hi[k] = atMost(mulSat(classesHi, int64(max(s.Values, len(present)))))
	}
	est.Classes = Bounds{AtLeast: bytes(keys, classesLo, lo), AtMost: bytes(keys, classesHi, hi)}
	if subset {
		est.Population = Bounds{AtLeast: bytes(q, est.Values, nil), AtMost: bytes(q, atMost(popCombinations), nil)}
	}
	return est, nil
}

// recordsAtMost bounds the records of parts (table.RecordsAtMost); −1 when some
// part's format gives no bound.
func recordsAtMost(cfg *schema.Config, j Job, like *generalize.Table, parts []string) (int64, error) {
	// A CSV record holds every configured column's field, at least: the separators
	// between them, its line end, and the shortest value of each quasi-identifier
	// (a leaf of its hierarchy) and protected sensitive column (a value gathered) that
	// has no null-as (with one, its field may be empty: a null). Quoting only adds.
	sep := int64(max(1, utf8.RuneLen(cfg.Input.CSV.Separator)))
	record := int64(len(cfg.Columns)-1)*sep + 1
	for _, c := range like.Columns {
		if conf := cfg.Column(c.Name); conf == nil || conf.Null != nil {
			continue
		}
		shortest := math.MaxInt
		for leaf := range c.Hierarchy.Leaves() {
			shortest = min(shortest, len(c.Hierarchy.Value(0, int32(leaf))))
		}
		if shortest < math.MaxInt {
			record += int64(shortest)
		}
	}
	for _, s := range like.Sensitive {
		values := j.Values[s.Name]
		if conf := cfg.Column(s.Name); conf == nil || conf.Null != nil || len(values) == 0 {
			continue
		}
		shortest := math.MaxInt
		for _, v := range values {
			shortest = min(shortest, len(v))
		}
		record += int64(shortest)
	}
	var total int64
	for _, part := range parts {
		format, err := table.InputFormat(part, cfg.Input)
		if err != nil {
			return 0, err
		}
		n, known, err := table.RecordsAtMost(part, format, record)
		if err != nil {
			return 0, err
		}
		if !known {
			return -1, nil
		}
		total = addSat(total, n)
	}
	return total, nil
}

// check refuses, as bad input naming --max-class-table, an estimate whose lower bound
// is past the job's bound, and warns on stderr of one whose upper bound is (see the
// comment at the top of this file); without a bound it does nothing.
func (est Estimate) check(j Job) error {
	bound := j.MaxClassTable
	if bound <= 0 {
		return nil
	}
	for _, t := range []struct {
		name string
		b    Bounds
	}{{"the input's class table", est.Classes}, {"the research subset's population's class table", est.Population}} {
		if t.b.AtLeast > bound {
			why := ""
			switch {
			case est.Widest != "" && est.Level > 0:
				why = fmt.Sprintf(" (column %q alone holds %d distinct values at its minimum level, %d)", est.Widest, est.Values, est.Level)
			case est.Widest != "":
				why = fmt.Sprintf(" (column %q alone holds %d distinct values)", est.Widest, est.Values)
			}
			return fault.BadInput("%s: %s would take at least %s%s, past the bound of %s (--max-class-table) on what the search holds on one machine; refused before counting: use fewer or coarser quasi-identifiers, raise their minimum levels (search.min-levels), or raise the bound", j.Name, t.name, size(t.b.AtLeast), why, size(bound))
		}
	}
	if hi := max(est.Classes.AtMost, est.Population.AtMost); hi > bound {
		slog.Warn("the class table may take more than --max-class-table allows: the merge refuses it if it does, after counting every part",
			"config", j.Name, "at_least", size(max(est.Classes.AtLeast, est.Population.AtLeast)), "at_most", size(hi), "bound", size(bound), "records_at_most", est.Records)
	}
	return nil
}

// size is b bytes for messages: in MiB, KiB or bytes.
func size(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", b)
}

// mulSat and addSat are a·b and a+b of non-negative numbers, math.MaxInt64 past it.
func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
