package main

import (
	"runtime/debug"
	"sanitizer/job"
)

// collector tunes the garbage collector to the stages of a release (told of them
// through job.Options.AtStage). The encoded table lives through the whole run
// while each stage makes its own short-lived data: returning a finished stage's memory
// to the system before the next one allocates keeps the two from adding up in the
// peak, and the search's garbage — large tables without pointers, which a collection
// marks for next to nothing — is collected twice as often, which holds its peak closer
// to what is live at little cost. Measured in BENCHMARKS.md.
type collector struct {
	percent int  // the setting before the search
	halved  bool // the search's setting is in force
	// reading is set while the read's setting is in force; before is the setting it
	// replaced.
	reading bool
	before  int
}

// readPercent is the collector's setting during the read: pass 1 makes garbage (the
// parsed batches) many times what stays (the codes as they grow), so it collects at
// three times the live heap rather than one and a half. Adult ×100 (CSV): read stage
// 0.90–1.04 s → 0.64–0.86 s, peak 90–97 → 151–163 MB; 10M Parquet records: no faster,
// peak 389 → 436 MB (BENCHMARKS.md). The search's FreeOSMemory returns what it leaves.
var readPercent = 200

// at adjusts the collector as stage begins.
func (c *collector) at(stage job.Stage) {
	switch stage {
	case job.StageRead:
		if c.reading {
			return
		}
		// A collector turned off (GOGC=off) or set above readPercent is left as it is.
		if before := debug.SetGCPercent(readPercent); before <= 0 || before >= readPercent {
			debug.SetGCPercent(before)
		} else {
			c.before, c.reading = before, true
		}
	case job.StageSearch:
		c.endRead()
		debug.FreeOSMemory() // the read's batches
		c.percent = debug.SetGCPercent(-1)
		if c.percent > 0 {
			debug.SetGCPercent(max(c.percent/2, 1))
		} else {
			debug.SetGCPercent(c.percent)
		}
		c.halved = true
	case job.StageWrite:
		c.restore()
		debug.FreeOSMemory() // the search's tables
	case job.StageVerify:
		debug.FreeOSMemory() // the write's batches and the codes
	}
}

// endRead puts back the setting the read changed, if it is still in force.
func (c *collector) endRead() {
	if c.reading {
		debug.SetGCPercent(c.before)
		c.reading = false
	}
}

// restore puts back the setting the read or the search changed, if it is still in
// force.
func (c *collector) restore() {
	c.endRead()
	if c.halved {
		debug.SetGCPercent(c.percent)
		c.halved = false
	}
}

// both is a stage hook that calls f, then g when it is set.
func both(f, g func(stage job.Stage)) func(stage job.Stage) {
	if g == nil {
		return f
	}
	return func(stage job.Stage) { f(stage); g(stage) }
}
