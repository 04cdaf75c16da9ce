package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/series"
	"sanitizer/verify"
)

// A night of a release series (release --series STATE.json; docs/series.md): the
// state locked and read before the input is opened, the search started from its node,
// what each class may publish tonight decided before the write (seriesnight.go), the
// rules checked again by the verifier against the state, and the new state committed
// before the release is put in place.

// seriesNight is one night of a release series in progress.
type seriesNight struct {
	h    *series.Handle
	prev *series.State // the state the last night left; nil on a series' first night
	id   string        // the series' id (a new one on its first night)
	// What the state records of the release (compatible).
	columns []string
	quasi   []string // the quasi-identifiers in the release's order
	qi      []int    // per quasi: its index among the table's columns
	digests series.Digests
	width   int // bytes of an entry
	// persons is, with a privacy unit, every person's digest by its code (pass 1).
	persons []byte
	// What the night decided (seriesStage).
	entries  []byte // per record, width bytes (unset where not published)
	deferred int    // new records withheld tonight (they wait)
	withheld int    // records withheld tonight: deferred, resting and retired
	pending  int    // records of tonight's additions (deferred or not)
	added    int    // entries added since the previous night
	removed  int    // entries removed since the previous night
	exposed  []int  // classes (tonight's, by number) that lost 1..k−1 records (persons)
	waiting  []series.Wait
	oldest   int // nights the oldest waiting record has waited (0: none waits)
	// What the state will record: the classes published, resting and retired.
	classes, resting, retired []series.Class
	// verifierState gives the state as the verifier's own reader read it
	// (readForVerifier; only with a previous night).
	verifierState chan verifierState
}

// checkSeries refuses a series night the configuration cannot run, naming the key:
// Mondrian (its partitions have no levels to be at least as general as), a research
// subset, the game-theoretic model with an attack (a cohort's payout is not decided),
// SafePub's differential privacy (every night would spend its budget again),
// an output that is not CSV (a row's digest is of its text as written) or is
// in a store (the state commits by renaming the release into place).
func checkSeries(cfg *schema.Config, out string, outFmt schema.Format) error {
	switch {
	case cfg.Search.Algorithm == schema.Mondrian:
		return cfg.Errorf("search.algorithm", "--series: a release series needs the optimal search (full-domain generalization: each night at least as general as the last); mondrian's partitions have no levels")
	case cfg.Privacy.Subset != nil:
		return cfg.Errorf("privacy.subset", "--series: a release series of a research subset is not supported in this version")
	case cfg.Search.LocalRecoding != nil:
		return cfg.Errorf("search.local-recoding", "--series: a night is released at one node, at least as general as the last night's, not pass by pass")
	case cfg.Privacy.DifferentialPrivacy != nil:
		return cfg.Errorf("privacy.differential-privacy", "--series: each night of a series would spend ε and δ again on the records it shares with the last; a series of differentially private releases is not in this version (charge each release to a --ledger)")
	case cfg.Privacy.Profitability != nil && cfg.Privacy.Profitability.Attack:
		return cfg.Errorf("privacy.profitability.attack", "--series: a night publishes a class's new records as a cohort of their own when they meet k and the models, which does not weigh a cohort's payout in this version: use attack: false (a k at which no attack pays)")
	case outFmt != schema.FormatCSV:
		return cfg.Errorf("output.format", "--series: a release series is written as CSV in this version (its rows' digests are of their text as written), not %s", outFmt)
	case schema.StoreURL(out):
		return fault.BadInput("--series: the release of a series night is a local file or folder of parts, not %s", out)
	}
	return nil
}

// openSeries locks and reads the series state opt.Series names (a night another run
// holds is refused at once, exit 1), after checking that cfg can run a series night;
// a night committed but not put in place is put in place first (series.Open), before
// the release's output is checked (and its dead temporaries swept).
func openSeries(cfg *schema.Config, opt job.Options) (*seriesNight, error) {
	_, out, _, outFmt, err := paths(cfg, opt)
	if err != nil {
		return nil, err
	}
	if err := checkSeries(cfg, out, outFmt); err != nil {
		return nil, err
	}
	h, err := series.Open(opt.Series, cfg.Series.KeyFile, opt.SeriesRestart)
	if err != nil {
		return nil, err
	}
	return &seriesNight{h: h, prev: h.State}, nil
}

// joinSeries makes sn (nil: none) the run's series night once the input is planned:
// its columns checked against the state's, and with a privacy unit pass 1 told to
// digest every person under the series key.
func (r *run) joinSeries(sn *seriesNight) error {
	if sn == nil {
		return nil
	}
	r.series = sn
	if err := sn.compatible(r); err != nil {
		return err
	}
	if r.cfg.Privacy.Unit != nil {
		r.p.seriesKey = sn.h.Key
	}
	return nil
}

// close lets the series' lock go.
func (sn *seriesNight) close() {
	if sn != nil {
		sn.h.Close()
	}
}

// compatible records what the state will say of tonight's release and refuses a night
// whose release columns, quasi-identifiers, privacy unit, models or hierarchies differ
// from the state's (bad input naming what changed; --series-restart starts anew).
func (sn *seriesNight) compatible(r *run) error {
	sn.columns = r.p.ReleaseHeader()
	sn.quasi, sn.qi = nil, nil
	for j := range r.p.Kept {
		for qi, pos := range r.p.Quasi {
			if pos == r.p.Kept[j] {
				sn.quasi, sn.qi = append(sn.quasi, r.p.Header[pos]), append(sn.qi, qi)
			}
		}
	}
	var err error
	if sn.digests, err = seriesDigests(r); err != nil {
		return err
	}
	persons := r.cfg.Privacy.Unit != nil
	sn.width = 16
	if persons {
		sn.width = 32
	}
	p := sn.prev
	if p == nil {
		sn.id, err = series.NewID()
		return err
	}
	sn.id = p.Series
	changed := ""
	switch {
	case !slices.Equal(p.Columns, sn.columns):
		changed = "the release's columns"
	case !slices.Equal(p.Quasi, sn.quasi):
		changed = "the quasi-identifiers"
	case p.Persons != persons:
		changed = "privacy.privacy-unit (persons or rows)"
	case p.Digests.Models != sn.digests.Models:
		changed = "the privacy models (privacy: k, l-diversity, t-closeness, β-likeness, the risk-based models)"
	}
	for _, q := range sn.quasi {
		if changed == "" && p.Digests.Hierarchies[q] != sn.digests.Hierarchies[q] {
			changed = fmt.Sprintf("the hierarchy of quasi-identifier %q (columns.%s.hierarchy)", q, q)
		}
	}
	if changed != "" {
		return fault.BadInput("--series %s: %s changed since night %d of series %s: a night must be comparable with the last; --series-restart starts a new series (the old nights' files stay public: a restart is the custodian's decision)", sn.h.Path(), changed, p.Night, p.Series)
	}
	return nil
}

// seriesDigests is what a series may not change: the models (the privacy section
// without the suppression limit and the released-columns check) and each
// quasi-identifier's hierarchy (its type, builder, and its file's digest).
func seriesDigests(r *run) (series.Digests, error) {
	d := series.Digests{Hierarchies: map[string]string{}}
	var err error
	if d.Models, err = modelsDigest(r.cfg.Privacy); err != nil {
		return d, err
	}
	files := r.p.Hier.Digests()
	for _, c := range r.cfg.Columns {
		if c.Role != schema.Quasi || c.Hierarchy == nil {
			continue
		}
		h := *c.Hierarchy
		spec := struct {
			Type      schema.Type
			Hierarchy schema.Hierarchy
			File      string
		}{c.Type, h, files[h.File]}
		spec.Hierarchy.File = "" // the file's bytes count, not where it lies
		if d.Hierarchies[c.Name], err = jsonDigest(spec); err != nil {
			return d, err
		}
	}
	return d, nil
}

// modelsDigest is the digest of the privacy section pr as a series compares it: the
// suppression limit, the released-columns check, the pseudonym and, with no model
// decided on the whole release, the risk models' enforcement left out.
func modelsDigest(pr schema.Privacy) (string, error) {
	pr.Suppression, pr.ReleasedColumns = 0, ""
	if pr.AverageRisk == 0 && pr.RecordsAtRisk == nil && pr.PopulationUniqueness == nil {
		pr.RiskEnforcement = "" // how no model is enforced is no model
	}
	if pr.Unit != nil {
		pr.Unit = &schema.Unit{Column: pr.Unit.Column, Pseudonym: nil}
	}
	return jsonDigest(pr)
}

// jsonDigest is "sha256:" and the hex SHA-256 of v's JSON with every zero value left
// out (false, 0, "", null, empty lists and objects) and objects' keys in order: a
// setting added to the configuration in a later version, at its zero value, leaves
// a series' digests as they were.
func jsonDigest(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fault.Internalf("series digest: %w", err)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return "", fault.Internalf("series digest: %w", err)
	}
	if b, err = json.Marshal(withoutZeros(tree)); err != nil {
		return "", fault.Internalf("series digest: %w", err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// withoutZeros is v, a decoded JSON value, with the zero values of its objects' keys
// left out (nil when v is itself zero).
func withoutZeros(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e = withoutZeros(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutZeros(e)
		}
		return out
	case bool:
		if !x {
			return nil
		}
	case float64:
		if x == 0 {
			return nil
		}
	case string:
		if x == "" {
			return nil
		}
	}
	return v
}

// minLevels raises the search's lower bounds to the previous night's node: tonight is
// at least as general in every quasi-identifier (levels in the table's column order).
func (sn *seriesNight) minLevels(lo []int, columns int) []int {
	if sn == nil || sn.prev == nil {
		return lo
	}
	if lo == nil {
		lo = make([]int, columns)
	}
	for k, qi := range sn.qi {
		lo[qi] = max(lo[qi], sn.prev.Node[k])
	}
	return lo
}

// node is tonight's levels in the state's order (the release's).
func (sn *seriesNight) node(levels []int) []int {
	out := make([]int, len(sn.qi))
	for k, qi := range sn.qi {
		out[k] = levels[qi]
	}
	return out
}

// nextState is the state after tonight: tonight's node and classes (as the
// verification read them from the written file), the last night's classes as the
// previous, what waits, the history, and the publication pending.
func (sn *seriesNight) nextState(r *run, output, temp, digest string) (*series.State, error) {
	s := &series.State{Format: series.Format, Columns: sn.columns, Quasi: sn.quasi, Persons: sn.width == 32,
		Digests: sn.digests, Node: sn.node(r.res.Levels), Classes: sn.classes, Resting: sn.resting, Retired: sn.retired, Waiting: sn.waiting}
	s.Series, s.Night = sn.id, sn.night()
	if p := sn.prev; p != nil {
		s.History = slices.Clone(p.History)
		s.Previous = &series.Night{Night: p.Night, Node: p.Node, Classes: p.Classes}
	}
	s.History = append(s.History, sn.record(r, output, digest))
	s.Pending = &series.Pending{Output: output, Temp: temp, Digest: digest}
	return s, nil
}

// record is tonight's line of the history.
func (sn *seriesNight) record(r *run, output, digest string) series.Record {
	return series.Record{Night: sn.night(), Time: r.created.UTC().Truncate(time.Second), Node: sn.node(r.res.Levels),
		Released: r.written, Deferred: sn.deferred, Withheld: sn.withheld, Removed: sn.removed, Output: output, Digest: digest}
}

// summary is the report's account of tonight (nil without a series).
func (sn *seriesNight) summary(r *run) *report.SeriesSummary {
	if sn == nil {
		return nil
	}
	s := &report.SeriesSummary{State: sn.h.Path(), Series: sn.id, Night: sn.night(), Removals: r.cfg.Series.Removals.String(),
		Added: sn.added, Removed: sn.removed, Deferred: sn.deferred, Withheld: sn.withheld,
		WaitingClasses: len(sn.waiting), OldestWait: sn.oldest, Exposed: sn.exposed, Quasi: sn.quasi}
	for _, c := range sn.retired {
		s.Retired += len(c.Entries) / sn.width
	}
	var past []series.Record
	if sn.prev != nil {
		past = sn.prev.History
	}
	for _, h := range append(slices.Clone(past), sn.record(r, r.out, "")) {
		s.History = append(s.History, report.SeriesRecord{Night: h.Night, Time: h.Time.UTC().Format(time.RFC3339), Node: h.Node,
			Released: h.Released, Deferred: h.Deferred, Removed: h.Removed})
	}
	s.Learns = report.SeriesLearns(s, r.sopt.K, r.t.Unit != nil)
	return s
}

// commit makes tonight the series' last night: the new state, naming the verified
// temporary release as pending, replaces the old one (the commit point); the caller
// then puts the release in place and calls published.
func (sn *seriesNight) commit(r *run) error {
	temp, err := filepath.Abs(r.dest.path()) // a next night may run in another folder
	if err != nil {
		return err
	}
	output, err := filepath.Abs(r.out)
	if err != nil {
		return err
	}
	digest, err := publish.ReleaseDigest(temp)
	if err != nil {
		return fmt.Errorf("output: the written release's digest: %w", err)
	}
	s, err := sn.nextState(r, output, temp, digest)
	if err != nil {
		return err
	}
	if err := sn.h.Commit(s); err != nil {
		return err
	}
	r.opt.At(job.StageSeriesCommitted)
	return nil
}

// published records that the night's release is in place.
func (sn *seriesNight) published() error {
	if err := sn.h.Published(); err != nil {
		return fmt.Errorf("%w (the night is committed and its release is in place; the next night finishes the state)", err)
	}
	return nil
}

// verifier is the verifier's check of tonight against the state, read by the
// verifier's own reader from the bytes the run read (nil without a series).
func (sn *seriesNight) verifier(r *run, spec verify.Spec, header []string) (*verify.SeriesCounter, error) {
	if sn == nil {
		return nil, nil
	}
	sc := verify.SeriesCheck{Node: sn.node(r.res.Levels), Quasi: sn.quasi, RemovalsAllowed: r.cfg.Series.Removals == schema.RemovalsAllow}
	if sn.prev != nil {
		read := <-sn.verifierState
		if read.err != nil {
			return nil, fault.Internalf("the verifier cannot read the series state the run read: %w", read.err)
		}
		sc.Prev, sc.PrevNode = read.state.Classes, read.state.Node
	}
	if sn.width == 2*series.DigestBytes {
		sc.Key = sn.h.Key
	}
	c, err := verify.NewSeriesCounter(sc, spec, header)
	if err != nil {
		return nil, fault.Internalf("the series check: %w", err)
	}
	return c, nil
}

// readForVerifier starts the verifier's own reading of the state the run read, while
// the night is written (verifier takes it).
func (sn *seriesNight) readForVerifier() {
	sn.verifierState = make(chan verifierState, 1)
	raw := sn.h.Raw
	sn.h.Raw = nil
	go func() {
		var read verifierState
		read.err = safe.Call(func() error {
			var err error
			read.state, err = verify.ReadSeriesState(raw)
			return err
		})
		sn.verifierState <- read
	}()
}

// verifierState is the state as the verifier's reader read it.
type verifierState struct {
	state *verify.SeriesState
	err   error
}

// verified finishes the verifier's check of tonight: a night that breaks the series'
// rules, or whose classes as the verifier read them from the written file differ from
// those the state is to record, is an internal error, and nothing is published.
func (sn *seriesNight) verified(c *verify.SeriesCounter) error {
	m, err := c.Finish()
	if err != nil {
		return fault.Internalf("the written release failed the series check, nothing published: %w", err)
	}
	if len(m.Classes) != len(sn.classes) {
		return fault.Internalf("the series check read %d classes from the written release, the night decided %d; nothing published", len(m.Classes), len(sn.classes))
	}
	for i, vc := range m.Classes {
		if !slices.Equal(vc.Labels, sn.classes[i].Labels) || !bytes.Equal(vc.Entries, sn.classes[i].Entries) {
			return fault.Internalf("the series check read class %d of the written release otherwise than the night decided it; nothing published", i)
		}
	}
	return nil
}

// deferred is the records a series night withholds (0 without a series).
func (r *run) deferred() int {
	if r.series == nil {
		return 0
	}
	return r.series.withheld
}

// committedDest is a release whose night the series' state has committed: it is put
// in place by this run or, if the run dies first, by the next night (series.Open), so
// it is never discarded.
type committedDest struct{ releaseDest }

func (committedDest) discard() {}
