package verify

// The game-theoretic model with an attack (Wan et al. 2015) as the verifier decides
// it, from the written release, the input and the configuration's hierarchies alone:
// a class's information loss is re-derived from what its released values cover in
// the utility domains (Spec.Utility), the publisher's payout from risk.Game. It
// shares no code with package generalize, which decides the same for the search.

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"sanitizer/fault"
	"sanitizer/risk"
)

// Profitability is the game-theoretic model with an attack (Wan et al. 2015, "A Game
// Theoretic Framework for Analyzing Re-Identification Risk", PLOS ONE; ARX's
// ProfitabilityProsecutor and ProfitabilityJournalist): a class of the release meets
// it when the publisher's expected payout for each of its records is positive,
// Game.Pays(IL, n), IL the records' entropy-based information loss
// (risk.EntropyLoss: the leaves under each released value over each hierarchy's
// leaves, as Spec.Utility's domains count them) and 1/n the adversary's chance: n the
// class's records for the prosecutor, its population count for the journalist
// (Journalist, with Spec.Population). The forms without an attack are k-anonymity
// and k-map with risk.CostBenefit.NoAttackK, given as Spec.K and Population.KMap.
//
// A Counter decides the prosecutor's form on the released classes (the journalist's
// needs the population's counts: CheckPopulation, with Population.Profitability);
// ExpectedSuppression decides both on the input's classes.
type Profitability struct {
	Game       risk.Game
	Journalist bool
}

// game is p's game as risk.CostBenefit.Game makes it (a Game built otherwise would
// not know when the adversary attacks).
func (p *Profitability) game() risk.Game { return p.Game.CostBenefit.Game() }

// checkProfitSpec reports a spec whose profitability cannot be decided: without the
// utility domains, which count the leaves, or with amounts out of range.
func checkProfitSpec(spec Spec) error {
	p := spec.Profitability
	if p == nil {
		return nil
	}
	if spec.Utility == nil {
		return errors.New("profitability: the information loss needs the quasi-identifiers' hierarchies (Spec.Utility)")
	}
	if err := p.Game.Check(); err != nil {
		return fmt.Errorf("profitability: %w", err)
	}
	return nil
}

// checkProfit decides the prosecutor's profitability on every released class (the
// utility counter having kept, per class and column, the leaves its value covers)
// and measures the least payout per record into m. Without the prosecutor's form it
// does nothing.
func (c *Counter) checkProfit(m *Measured) error {
	p := c.spec.Profitability
	if p == nil || p.Journalist {
		return nil
	}
	u, g := c.util, p.game()
	q, classes := len(u.cols), c.classes.len()
	if len(u.under) < classes*q {
		return fault.Internalf("profitability: the leaves of %d classes kept, %d counted", len(u.under)/max(q, 1), classes)
	}
	leaves := make([]int64, q)
	for j, col := range u.cols {
		leaves[j] = int64(len(col.leaves))
	}
	var bad error
	for i := range classes {
		n := int64(c.cls[i*c.stride])
		if n == 0 {
			continue
		}
		il := risk.EntropyLoss(u.under[i*q:(i+1)*q], leaves)
		pay := g.Payout(il, n)
		if !m.Payout || pay < m.LeastPayout {
			m.LeastPayout, m.Payout = pay, true
		}
		if bad == nil && !g.Pays(il, n) {
			bad = &Violation{Msg: fmt.Sprintf("a released class of %d records leaves the publisher an expected payout of %.6g per record, not above 0 (the prosecutor's profitability; information loss %.4g)", n, pay, il)}
		}
	}
	return bad
}

// Leaves counts, for the entropy-based information loss of a class known by its key
// (its labels at given levels), the leaves of each quasi-identifier's domain
// (Spec.Utility) and the leaves under each value of a level: a hierarchy file's leaves
// are its rows, listed in the input or not (under a value of level l, the rows whose
// level-l entry it is); a built hierarchy's (intervals, mask, date) the distinct
// values added (Add, Reading: the input's, the whole population's for a research
// subset), as the utility measurement counts them. It is safe for concurrent use.
type Leaves struct {
	mu    sync.Mutex
	qs    []Quasi
	built [][]string            // per built column, the distinct values added (nil for a file)
	seen  []map[string]struct{} // per built column, the same as a set
	// per column and level, the leaves under each value (reset when a value is added)
	under []map[int]map[string]int64
}

// NewLeaves counts the leaves of spec.Utility's domains.
func NewLeaves(spec Spec) (*Leaves, error) {
	if len(spec.Utility) != len(spec.Quasi) {
		return nil, fmt.Errorf("leaves: %d hierarchies for %d quasi-identifiers", len(spec.Utility), len(spec.Quasi))
	}
	l := &Leaves{qs: spec.Utility, built: make([][]string, len(spec.Utility)), seen: make([]map[string]struct{}, len(spec.Utility)), under: make([]map[int]map[string]int64, len(spec.Utility))}
	for j, q := range spec.Utility {
		if q.Domain == nil {
			return nil, fmt.Errorf("leaves: quasi-identifier %q has no hierarchy", q.Column)
		}
		if q.Domain.kind != domainFile {
			l.seen[j] = map[string]struct{}{}
		}
		l.under[j] = map[int]map[string]int64{}
	}
	return l, nil
}

// Add makes the quasi-identifier values of an input (population) record, orig's first
// values in spec.Quasi order ("" read as a column's Null when set), leaves of the
// built hierarchies; a hierarchy file's leaves are its rows whatever is added.
func (l *Leaves) Add(orig []string) error {
	if len(orig) < len(l.qs) {
		return fmt.Errorf("leaves: an input record of %d values for %d quasi-identifiers", len(orig), len(l.qs))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for j, q := range l.qs {
		if l.seen[j] == nil {
			continue
		}
		v := orig[j]
		if v == "" && q.Null != nil {
			v = *q.Null
		}
		if _, ok := l.seen[j][v]; ok {
			continue
		}
		v = strings.Clone(v)
		l.seen[j][v] = struct{}{}
		l.built[j] = append(l.built[j], v)
		clear(l.under[j])
	}
	return nil
}

// Reading is in, adding every record read to the leaves (Add) on the way: for
// counting a population's built leaves as PopulationCounts reads it, say.
func (l *Leaves) Reading(in Reader) Reader { return &leavesReader{in: in, l: l} }

type leavesReader struct {
	in Reader
	l  *Leaves
}

func (r *leavesReader) Read() ([]string, error) {
	rec, err := r.in.Read()
	if err != nil {
		return rec, err
	}
	if err := r.l.Add(rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// Loss is the entropy-based information loss (risk.EntropyLoss, in quasi-identifier
// order) of a record of the class whose key (its labels at levels, keyed as Classes
// are) is key. A label that covers no leaf is a *Violation naming the column, never
// the value.
func (l *Leaves) Loss(levels []int, key string) (float64, error) {
	q := len(l.qs)
	if len(levels) != q {
		return 0, fmt.Errorf("leaves: %d levels for %d quasi-identifiers", len(levels), q)
	}
	labels := make([]string, q)
	if !splitKey(key, labels) {
		return 0, errors.New("leaves: a malformed class key")
	}
	under, leaves := make([]int64, q), make([]int64, q)
	l.mu.Lock()
	defer l.mu.Unlock()
	for j := range q {
		counts, total, err := l.level(j, levels[j])
		if err != nil {
			return 0, err
		}
		under[j], leaves[j] = counts[labels[j]], total
		if under[j] == 0 {
			return 0, &Violation{Msg: fmt.Sprintf("column %q: a class's value that covers no leaf of its %s at level %d", l.qs[j].Column, l.qs[j].Domain.source, levels[j])}
		}
	}
	return risk.EntropyLoss(under, leaves), nil
}

// LossAt is Loss at the given levels, for Population.Loss.
func (l *Leaves) LossAt(levels []int) func(key string) (float64, error) {
	levels = append([]int(nil), levels...)
	return func(key string) (float64, error) { return l.Loss(levels, key) }
}

// level is, for column j at the given level, the leaves under each of its values, and
// the column's leaves; l.mu held.
func (l *Leaves) level(j, level int) (map[string]int64, int64, error) {
	q := l.qs[j]
	d := q.Domain
	total := int64(len(l.built[j]))
	if d.kind == domainFile {
		total = int64(len(d.rows))
	}
	if total == 0 {
		return nil, 0, fmt.Errorf("leaves: column %q: its %s has no leaves (were the input's values added?)", q.Column, d.source)
	}
	if counts, ok := l.under[j][level]; ok {
		return counts, total, nil
	}
	vals := l.built[j]
	if d.kind == domainFile {
		vals = make([]string, len(d.rows))
		for i, r := range d.rows {
			vals[i] = r[0]
		}
	}
	counts := map[string]int64{}
	for _, v := range vals {
		s, ok := d.Label(v, level)
		if !ok {
			return nil, 0, &Violation{Msg: fmt.Sprintf("column %q: a leaf that level %d of its %s does not generalize", q.Column, level, d.source)}
		}
		counts[s]++
	}
	l.under[j][level] = counts
	return counts, total, nil
}

// classProfit decides the profitability of the input's classes at a node
// (ExpectedSuppression): the prosecutor's and the journalist's games (nil: not
// decided) and the leaves.
type classProfit struct {
	prosecutor, journalist *risk.Game
	leaves                 *Leaves
	levels                 []int
}

// newClassProfit is the profitability of spec's input classes at levels (nil when spec
// has none): spec.Profitability, and a research subset's Model.Profitability (the
// journalist's). Its leaves are the subset's population's (PopulationCheck.Leaves)
// with a research subset and a built hierarchy, else a new count that the input's
// records are to be added to (the second result: true).
func newClassProfit(spec Spec, levels []int) (*classProfit, bool, error) {
	cp := &classProfit{levels: levels}
	if p := spec.Profitability; p != nil {
		if err := checkProfitSpec(spec); err != nil {
			return nil, false, err
		}
		g := p.game()
		if !p.Journalist {
			cp.prosecutor = &g
		} else if spec.Population == nil {
			return nil, false, errors.New("the journalist's profitability needs the research subset's population (Spec.Population)")
		} else {
			cp.journalist = &g
		}
	}
	if spec.Population != nil && spec.Population.Model.Profitability != nil {
		g := spec.Population.Model.Profitability.CostBenefit.Game()
		if cp.journalist != nil && *cp.journalist != g {
			return nil, false, errors.New("the journalist's profitability given twice with different amounts (Spec.Profitability, Spec.Population.Model.Profitability)")
		}
		cp.journalist = &g
	}
	if cp.prosecutor == nil && cp.journalist == nil {
		return nil, false, nil
	}
	if spec.Utility == nil {
		return nil, false, errors.New("profitability: the information loss needs the quasi-identifiers' hierarchies (Spec.Utility)")
	}
	if spec.Population != nil && spec.Population.Leaves != nil {
		cp.leaves = spec.Population.Leaves
		return cp, false, nil
	}
	for _, q := range spec.Utility {
		if spec.Population != nil && q.Domain != nil && q.Domain.kind != domainFile {
			return nil, false, fmt.Errorf("profitability over a research subset: column %q has a built hierarchy, whose leaves are the population's values (Spec.Population.Leaves)", q.Column)
		}
	}
	var err error
	cp.leaves, err = NewLeaves(spec)
	return cp, true, err
}

// fails decides whether the input class keyed key, of n records and pop population
// records, fails the profitability, and says how (never a value).
func (cp *classProfit) fails(key string, n, pop int64) (bool, string, error) {
	if cp == nil {
		return false, "", nil
	}
	il, err := cp.leaves.Loss(cp.levels, key)
	if err != nil {
		return false, "", err
	}
	if g := cp.prosecutor; g != nil && !g.Pays(il, n) {
		return true, fmt.Sprintf("has %d records, which leave the publisher an expected payout of %.6g per record, not above 0 (the prosecutor's profitability)", n, g.Payout(il, n)), nil
	}
	if g := cp.journalist; g != nil && !g.Pays(il, pop) {
		return true, fmt.Sprintf("has %d population records, which leave the publisher an expected payout of %.6g per record, not above 0 (the journalist's profitability)", pop, g.Payout(il, pop)), nil
	}
	return false, "", nil
}
