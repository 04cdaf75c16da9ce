package release

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/verify"
)

// Local recoding (search.local-recoding, generalize.LocalRecode): after the optimal
// search, the records its node suppresses are released at nodes of their own, pass
// after pass. The release is then written as a Mondrian release is, from every
// record's class and each class's released values (partLabels), a class being the
// records that share their released values whichever pass placed them.

// localGSFactor is the passes' gs-factor: the configured one, else ARX's default 0.05,
// or 0.5 for the metrics that need at least 0.5 (entropy-loss, publisher-payout).
func localGSFactor(cfg *schema.Config) float64 {
	lr := cfg.Search.LocalRecoding
	switch {
	case lr.GSFactor != nil:
		return *lr.GSFactor
	case cfg.Search.Metric.NeedsHalfGSFactor():
		return 0.5
	}
	return 0.05
}

// localRecoding runs the passes of search.local-recoding after the optimal search's
// node (r.res, r.class): every record's class and what the classes release become the
// passes', and the labels the write stage writes them with. It returns the classes'
// covers.
func (r *run) localRecoding(ctx context.Context) (generalize.ClassCovers, error) {
	lr := r.cfg.Search.LocalRecoding
	share := r.cfg.Privacy.Suppression
	p, err := generalize.LocalRecode(ctx, r.t, r.sopt, r.res.Levels, generalize.LocalRecoding{
		Iterations: lr.Iterations, GSFactor: localGSFactor(r.cfg), Adaption: lr.Adaption,
		Limit: func(n int) int { return maxSuppressed(share, n) }, Cells: lr.Cells,
	})
	if err != nil {
		return generalize.ClassCovers{}, err
	}
	r.placement, r.localFirst = p, r.res.Suppressed
	r.labels, r.class = mergedLabels(r.t, p)
	r.classes, r.classOf, r.released = nil, nil, nil
	for i, c := range r.class {
		r.suppressed[i] = c < 0
	}
	covers := mergedCovers(p, r.class, len(r.labels.idx)/max(1, len(r.t.Columns)))
	p.Class, p.Pass = r.class, nil // the write stage's classes: the merged ones
	r.res.Suppressed, r.res.Classes, r.res.MinClass = p.Suppressed, 0, 0
	sizes := make([]int, covers.Classes())
	for _, c := range r.class {
		if c >= 0 {
			sizes[c]++
		}
	}
	for _, n := range sizes {
		r.res.Classes++
		if r.res.MinClass == 0 || n < r.res.MinClass {
			r.res.MinClass = n
		}
	}
	r.res.MinPersons = r.res.MinClass
	return covers, nil
}

// mergedLabels is the released values of p's classes as the write stage writes them,
// each distinct value once per column, and every record's class renumbered so that
// classes releasing the same values (placed by different passes) are one.
func mergedLabels(t *generalize.Table, p *generalize.Placement) (*partLabels, []int32) {
	q := len(t.Columns)
	labels := &partLabels{dict: make([][]string, q)}
	// per column: each cover's label in dict (−1: not yet seen), only the covers a
	// class releases (a dictionary holds released values only)
	of := make([][]int32, q)
	at := make([]map[string]int32, q)
	for j, dict := range p.Covers.Dict {
		of[j], at[j] = make([]int32, len(dict)), map[string]int32{}
		for x := range of[j] {
			of[j][x] = -1
		}
	}
	for c := range p.Covers.Classes() {
		for j := range q {
			x := p.Covers.Index[c*q+j]
			if of[j][x] >= 0 {
				continue
			}
			cv := p.Covers.Dict[j][x]
			s := t.Columns[j].Hierarchy.Value(int(cv.Level), cv.Code)
			y, ok := at[j][s]
			if !ok {
				y = int32(len(labels.dict[j]))
				at[j][s] = y
				labels.dict[j] = append(labels.dict[j], s)
			}
			of[j][x] = y
		}
	}
	merged := map[string]int32{}
	renumber := make([]int32, p.Covers.Classes())
	key := make([]byte, 4*q)
	for c := range renumber {
		for j := range q {
			binary.LittleEndian.PutUint32(key[4*j:], uint32(of[j][p.Covers.Index[c*q+j]]))
		}
		m, ok := merged[string(key)]
		if !ok {
			m = int32(len(merged))
			merged[string(key)] = m
			for j := range q {
				labels.idx = append(labels.idx, of[j][p.Covers.Index[c*q+j]])
			}
		}
		renumber[c] = m
	}
	class := make([]int32, len(p.Class))
	for i, c := range p.Class {
		class[i] = -1
		if c >= 0 {
			class[i] = renumber[c]
		}
	}
	return labels, class
}

// mergedCovers is what each of the n merged classes releases (class: the merged class
// of every record): the covers of one of the passes' classes it merges.
func mergedCovers(p *generalize.Placement, class []int32, n int) generalize.ClassCovers {
	q := len(p.Covers.Dict)
	out := generalize.ClassCovers{Dict: p.Covers.Dict, Index: make([]int32, n*q)}
	done := make([]bool, n)
	for i, c := range class {
		if c < 0 || done[c] {
			continue
		}
		done[c] = true
		copy(out.Index[int(c)*q:int(c+1)*q], p.Covers.Index[int(p.Class[i])*q:int(p.Class[i]+1)*q])
	}
	return out
}

// checkLocalRecoding refuses what local recoding cannot run with, naming the key: it
// places records pass by pass, so only models decided class by class take part.
func checkLocalRecoding(cfg *schema.Config) error {
	lr, pr := cfg.Search.LocalRecoding, cfg.Privacy
	if lr == nil {
		return nil
	}
	switch {
	case cfg.Search.Algorithm == schema.Mondrian:
		return cfg.Errorf("search.local-recoding", "is for search.algorithm optimal: Mondrian suppresses nothing, and its partitions are already local")
	case pr.Unit != nil:
		return cfg.Errorf("search.local-recoding", "not with privacy.privacy-unit in this version: a person's records would be placed by several passes")
	case pr.Subset != nil:
		return cfg.Errorf("privacy.subset", "local recoding decides every pass's classes on their own, and a research subset's population models (δ-presence, k-map, the journalist's risks) count a class's population, which a pass of a part of the records does not know")
	}
	m := cfg.Search.Metric
	switch {
	case lr.GSFactor != nil && !m.TakesGSFactor():
		return cfg.Errorf("search.local-recoding.gs-factor", "only with metric loss, entropy, entropy-monotone, entropy-loss or publisher-payout: %s weighs no generalization against suppression", m)
	case m.NeedsHalfGSFactor() && localGSFactor(cfg) < 0.5:
		return cfg.Errorf("search.local-recoding.gs-factor", "%g is below 0.5, where %s would charge a suppressed record less than a published one may cost: use 0.5 to 1", localGSFactor(cfg), m)
	}
	return nil
}

// localSummary is the report's account of the passes (nil: no local recoding).
func localSummary(cfg *schema.Config, cols []generalize.Column, p *generalize.Placement, firstSuppressed int) *report.LocalRecodingSummary {
	if p == nil {
		return nil
	}
	lr := cfg.Search.LocalRecoding
	s := &report.LocalRecodingSummary{Iterations: lr.Iterations, GSFactor: localGSFactor(cfg), Adaption: lr.Adaption, Cells: lr.Cells, Passes: p.Passes, FirstSuppressed: firstSuppressed, SuppressedCells: p.Cells}
	for i, node := range p.Nodes {
		s.Nodes = append(s.Nodes, report.LocalNode{Node: nodeLevels(cols, node), Records: p.Placed[i]})
	}
	return s
}

// localNodesJSON is the release metadata's sanitize.local_nodes: the passes' nodes.
func localNodesJSON(cols []generalize.Column, nodes [][]int) string {
	out := make([][]report.NodeLevel, len(nodes))
	for i, n := range nodes {
		out[i] = nodeLevels(cols, n)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// localPlacement is the verifier's own placement of the input's records by the passes
// of nodes (verify.ExpectedPasses), set into spec (whose utility domains are set): its
// walk then checks every record at its pass's node. With enforced risk models, the
// classes of the release rel tell it which classes a pass withheld for them.
func localPlacement(ctx context.Context, p *plan, spec *verify.Spec, nodes [][]int, rel string) error {
	spec.Passes = nodes
	if spec.Risk.Enforcing() {
		kept, err := releasedClasses(ctx, p, rel, *spec)
		if err != nil {
			return err
		}
		spec.Kept = kept
	}
	cols := slices.Clone(p.Quasi)
	spec.Sensitive = slices.Clone(spec.Sensitive)
	for i, sc := range p.protectedColumns() {
		cols = append(cols, sc.pos)
		spec.Sensitive[i].Null = inputNull(p, sc.pos)
	}
	return readInput(func() (verify.Reader, func(), error) { return reopenInput(ctx, p, cols) }, func(in verify.Reader) (err error) {
		spec.Placed, err = verify.ExpectedPasses(*spec, in)
		return err
	})
}

// localNodes is the passes' nodes a release records (sanitize.local_nodes, or its
// report's local_recoding.nodes), nil when it records none.
func (r *recorded) localNodes(release string, quasi []string) ([][]int, error) {
	v, ok := r.values["sanitize.local_nodes"]
	if !ok {
		return nil, nil
	}
	var nodes [][]report.NodeLevel
	if err := json.Unmarshal([]byte(v), &nodes); err != nil || len(nodes) == 0 {
		return nil, fault.Unattainable("%s: %s %s is not a list of nodes", release, r.where, r.name["sanitize.local_nodes"])
	}
	out := make([][]int, len(nodes))
	for i, node := range nodes {
		b, _ := json.Marshal(node)
		one := &recorded{where: r.where, name: map[string]string{"sanitize.node": r.name["sanitize.local_nodes"]}, values: map[string]string{"sanitize.node": string(b)}}
		l, err := one.levels(release, quasi)
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}

// checkLocal is Check's placement of a local recoding's records: the nodes its
// metadata or report records, the verifier's passes over the input by them.
func checkLocal(ctx context.Context, p *plan, reportPath string, meta *recorded, spec *verify.Spec) error {
	recs, err := recordedBy(meta, reportPath)
	if err != nil {
		return err
	}
	var nodes [][]int
	for _, r := range recs {
		n, err := r.localNodes(p.output, p.QuasiNames())
		if err != nil {
			return err
		}
		if n != nil && nodes != nil && !slices.EqualFunc(n, nodes, slices.Equal[[]int]) {
			return fault.Unattainable("%s: its metadata and its report record different nodes", p.output)
		}
		if n != nil {
			nodes = n
		}
	}
	if nodes == nil {
		return fault.BadInput("%s: a release placed pass by pass (search.local-recoding) is checked against the nodes it records: give its report with --report (a CSV release records them nowhere else)", p.output)
	}
	if err := utilitySpec(p, spec); err != nil {
		return err
	}
	if p.Config.Search.LocalRecoding.Cells {
		if err := cellPasses(p.output, nodes, spec.Utility); err != nil {
			return err
		}
	}
	return localPlacement(ctx, p, spec, nodes, p.output)
}

// cellPasses reports (fault.ErrUnattainable) a cell suppression's pass whose node is
// not the first node with some quasi-identifiers (of the hierarchies qs) raised to
// their top level.
func cellPasses(release string, nodes [][]int, qs []verify.Quasi) error {
	for i, node := range nodes[1:] {
		for j, l := range node {
			if top := qs[j].Domain.Height() - 1; l != nodes[0][j] && l != top {
				return fault.Unattainable("%s: search.local-recoding.cells: pass %d's node has column %q at level %d, neither the first node's %d nor its top %d", release, i+2, qs[j].Column, l, nodes[0][j], top)
			}
		}
	}
	return nil
}

// checkPlaced checks, for Check, a release placed pass by pass (the verifier's
// placement pl) against its classes: the passes' classes, and their left-out records.
func checkPlaced(rel string, pl *verify.Placement, classes *verify.Classes, m *Measured) error {
	if err := violation(rel, pl.CheckClasses(classes)); err != nil {
		return err
	}
	if n := pl.Suppressed(); n != m.Suppressed {
		return fault.Unattainable("%s: %d input records are missing, the passes leave %d suppressed", rel, m.Suppressed, n)
	}
	return nil
}
