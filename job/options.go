package job

import (
	"log/slog"
	"path/filepath"
	"runtime"
	"sanitizer/schema"
	"sanitizer/table"
	"time"
)

// Options are the command line's choices for one run.
type Options struct {
	Input   string   // overrides the configuration's input.path
	Output  string   // overrides output.path (release) ; the release file for Check
	Report  string   // release, risk: a report to write ("" = none), before those of Reports; Check: the release's JSON report to check against
	Reports []string // release, risk: every other report to write, each in the format its name's extension says (ReportPaths)
	Ledger  string   // dp: the budget ledger ("" = none)
	Force   bool     // release, gen: replace an existing output (and report) with the new, verified one
	// Series is a release series' state file (release, check: --series; "": a release
	// on its own), SeriesRestart starts a new series there (--series-restart).
	Series        string
	SeriesRestart bool
	Workers       int              // ≤ 0: GOMAXPROCS
	Progress      *Progress        // counts the run's work as it happens (nil: not counted)
	Log           *slog.Logger     // stage completions (Info) and warnings (Warn); nil: none
	Now           func() time.Time // the release time in the metadata (nil: time.Now)
	// AtStage, when set, is called on the run's goroutine as each of its stages
	// begins and at its publishing points (StageRead … StagePublish): the command
	// tunes the collector there, tests stop a run there. The release's stages hold
	// distinct data: the encoded table from StageRead on, the search's tables in
	// StageSearch only, the write's batches in StageWrite only; what a stage no longer
	// needs is garbage when the next one begins.
	AtStage func(stage Stage)
}

// At tells opt.AtStage that the run reached stage.
func (o Options) At(stage Stage) {
	if o.AtStage != nil {
		o.AtStage(stage)
	}
}

// ReportPaths is every report a release or risk run writes: Report (when set), then
// Reports.
func (o Options) ReportPaths() []string {
	if o.Report == "" {
		return o.Reports
	}
	return append([]string{o.Report}, o.Reports...)
}

// Parallel is the number of workers: o.Workers, or GOMAXPROCS when it is not positive.
func (o Options) Parallel() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// OpenInput opens the input table and matches its columns with the configuration,
// whose hierarchy files it reads.
func OpenInput(cfg *schema.Config, in string, format schema.Format) (table.Source, *Plan, error) {
	return OpenInputWith(cfg, in, format, nil)
}

// OpenInputWith is OpenInput with the hierarchy files already read (nil: read them).
func OpenInputWith(cfg *schema.Config, in string, format schema.Format, hier *HierFiles) (table.Source, *Plan, error) {
	names := make([]string, len(cfg.Columns))
	for i, c := range cfg.Columns {
		names[i] = c.Name
	}
	src, err := table.Open(in, format, cfg.Input.CSV, names)
	if err != nil {
		return nil, nil, err
	}
	p, err := NewPlan(cfg, in, src.Columns())
	if err == nil {
		if p.Hier = hier; hier == nil {
			p.Hier, err = ReadHierFiles(cfg)
		}
	}
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	p.InFormat = format
	p.locate = table.Locator(src)
	return src, p, nil
}

// Millis is the time from a to b in milliseconds.
func Millis(a, b time.Time) float64 { return float64(b.Sub(a).Microseconds()) / 1000 }

// Logger is o.Log, or a logger that discards everything.
func (o Options) Logger() *slog.Logger {
	if o.Log != nil {
		return o.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Abs is p made absolute, or p itself when that fails.
func Abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// Time is the release time: o.Now(), or the current time when o.Now is nil.
func (o Options) Time() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
