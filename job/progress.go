package job

import (
	"log/slog"
	"sync/atomic"
)

// Stage is a stage of a run, or a point of it that Options.AtStage is told of, named
// as the logs name it.
type Stage string

// Stages of a run, as Progress reports them.
const (
	StageRead   Stage = "read"   // pass 1: reading and encoding
	StageSearch Stage = "search" // the search over the lattice
	StageWrite  Stage = "write"  // pass 2: recoding and writing
	StageVerify Stage = "verify" // re-reading the written file
)

// Points of a run that Options.AtStage is told of besides the stages above.
const (
	StageNoise    Stage = "noise"    // dp: the noisy outputs are computed, nothing written
	StageRecorded Stage = "recorded" // dp: the spend is in the ledger, nothing published
	StagePublish  Stage = "publish"  // everything is written (and verified): about to move into place
	// A release with --force and --report: the old report is removed (the old release
	// is still in place), then the release is in place (the new report not yet).
	StageReportRemoved    Stage = "report-removed"
	StageReleasePublished Stage = "release-published"
	// A night of a release series: what tonight publishes of each class is decided
	// (before the write); the new state is committed (the release not yet in place).
	StageSeries          Stage = "series"
	StageSeriesCommitted Stage = "series-committed"
)

// Stages are the stages and points of a run, in the order a run reaches them.
var Stages = []Stage{StageRead, StageSearch, StageSeries, StageWrite, StageVerify, StageNoise, StageRecorded, StagePublish, StageSeriesCommitted, StageReportRemoved, StageReleasePublished}

// String is the stage's name.
func (s Stage) String() string { return string(s) }

// LogValue logs the stage as its name, a string.
func (s Stage) LogValue() slog.Value { return slog.StringValue(string(s)) }

// Progress counts a run's work while it happens, for a progress display: another
// goroutine may read it at any time. A nil *Progress counts nothing.
type Progress struct {
	Read      atomic.Int64 // records read by pass 1
	Evaluated atomic.Int64 // lattice nodes counted by the search
	Written   atomic.Int64 // records released by pass 2 (suppressed records are not counted)
	stage     atomic.Value // Stage
	// OnBatch, when not nil, is called with the stage by the worker goroutine that
	// counts a batch read (StageRead) or written (StageWrite): a test's way into them.
	OnBatch func(stage Stage)
}

// Stage returns the stage the run is in ("" before the first).
func (p *Progress) Stage() Stage {
	if p == nil {
		return ""
	}
	s, _ := p.stage.Load().(Stage)
	return s
}

// Enter records that the run entered stage.
func (p *Progress) Enter(stage Stage) {
	if p != nil {
		p.stage.Store(stage)
	}
}

// AddRead counts n records read by pass 1.
func (p *Progress) AddRead(n int) {
	if p != nil {
		p.Read.Add(int64(n))
		p.batch(StageRead)
	}
}

// AddWritten counts n records released by pass 2.
func (p *Progress) AddWritten(n int) {
	if p != nil {
		p.Written.Add(int64(n))
		p.batch(StageWrite)
	}
}

// batch tells OnBatch, when set, that a batch of stage was counted.
func (p *Progress) batch(stage Stage) {
	if p.OnBatch != nil {
		p.OnBatch(stage)
	}
}

// AddEvaluated counts n lattice nodes the search counted.
func (p *Progress) AddEvaluated(n int) {
	if p != nil {
		p.Evaluated.Add(int64(n))
	}
}
