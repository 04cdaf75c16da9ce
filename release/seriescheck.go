package release

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"

	"sanitizer/fault"
	"sanitizer/internal/keyfile"
	"sanitizer/internal/readfile"
	"sanitizer/publish"
	"sanitizer/schema"
	"sanitizer/series"
	"sanitizer/verify"
)

// maxSeriesState bounds the state file check --series reads.
const maxSeriesState = 8 << 30

// seriesChecked is what check --series needs of a series: its state as the verifier
// reads it, and its key (with persons).
type seriesChecked struct {
	path  string
	state *verify.SeriesState
	key   []byte
}

// readSeriesCheck reads the series state path for check --series with the verifier's
// own reader, and the series key when its entries hold persons.
func readSeriesCheck(cfg *schema.Config, path string) (*seriesChecked, error) {
	data, err := readfile.Read(path, maxSeriesState)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.BadInput("--series %s: no such series state", path)
	}
	if err != nil {
		return nil, fault.BadInput("--series: %w", err)
	}
	st, err := verify.ReadSeriesState(data)
	if err != nil {
		return nil, fault.BadInput("--series %s: %w", path, err)
	}
	sc := &seriesChecked{path: path, state: st}
	if st.Persons {
		if sc.key, err = keyfile.Read(series.KeyPath(path, cfg.Series.KeyFile), "series"); err != nil {
			return nil, fault.BadInput("series.key-file: %w", err)
		}
	}
	return sc, nil
}

// withheld is the records the series' last night left out by the series' rules.
func (sc *seriesChecked) withheld() int {
	if sc == nil || len(sc.state.History) == 0 {
		return 0
	}
	return sc.state.History[len(sc.state.History)-1].Withheld
}

// check re-checks the release p.output as the series' last night: it must be the
// release the state recorded (its digest), its classes read from the file must be
// those the state holds, and against the night before (the state's previous classes)
// every class must have gained 0 or at least k records (persons) meeting the models on
// their own and lost 0 or at least k unless series.removals allows it. A release that
// fails is an error matching fault.ErrUnattainable.
func (sc *seriesChecked) check(ctx context.Context, p *plan, spec verify.Spec) error {
	st, rel := sc.state, p.output
	last := st.History[len(st.History)-1]
	if d, err := publish.ReleaseDigest(rel); err != nil || d != last.Digest {
		return fault.BadInput("--series %s: %s is not the release of the series' last night, night %d (its digest differs): check --series checks the last night", sc.path, rel, st.Night)
	}
	c := verify.SeriesCheck{Node: st.Node, Quasi: st.Quasi, RemovalsAllowed: p.Config.Series.Removals == schema.RemovalsAllow}
	if prev := st.Previous; prev != nil {
		c.Prev, c.PrevNode = prev.Classes, prev.Node
	}
	if st.Persons {
		c.Key = sc.key
	}
	counter, err := verify.NewSeriesCounter(c, spec, spec.Columns)
	if err != nil {
		return err
	}
	p.seriesCheck, p.maxSupp = counter, spec.MaxSuppressed
	defer func() { p.seriesCheck = nil }()
	if _, err := verifyTruth(ctx, p, rel, spec.Columns, nil, nil); err != nil {
		return violation(rel, err)
	}
	m, err := counter.Finish()
	if err != nil {
		return violation(rel, err)
	}
	if !sameClasses(m.Classes, st.Classes) {
		return fault.Unattainable("%s: its classes are not those the series state %s records for night %d", rel, sc.path, st.Night)
	}
	return nil
}

// sameClasses reports whether two lists of classes hold the same labels and entries.
func sameClasses(a, b []verify.SeriesClass) bool {
	return slices.EqualFunc(a, b, func(x, y verify.SeriesClass) bool {
		return slices.Equal(x.Labels, y.Labels) && bytes.Equal(x.Entries, y.Entries)
	})
}
