package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"

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
	// mu guards the settings, which the read's tuning (watchRead) changes after a
	// collection, on the runtime's finalizer goroutine.
	mu      sync.Mutex
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

// readHeadroom is the most the read lets the heap grow above what the last
// collection left live: collecting at three times the live heap lets 400 MB of
// garbage pile up once the codes are 200 MB (10M admissions with their patients' ids:
// read peak 587 MB, the run's highest). Above readHeadroom/2 live, the setting falls
// from readPercent toward the run's own (readSetting). 10M admissions, peak RSS at
// 192 MiB → 128 MiB: in persons 568–592 → 490–513 MB, in records 395–400 → 361 MB,
// the read no slower (BENCHMARKS.md).
var readHeadroom uint64 = 128 << 20

// readSetting is the read's collector setting after a collection that left live
// bytes: readPercent, or less, so that the next collection comes at most readHeadroom
// above the live heap, but never less than floor (the run's own setting).
func readSetting(live uint64, floor int) int {
	p := readPercent
	if live > 0 {
		p = int(min(uint64(readPercent), readHeadroom*100/live))
	}
	return max(p, floor)
}

// at adjusts the collector as stage begins.
func (c *collector) at(stage job.Stage) {
	switch stage {
	case job.StageRead:
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.reading {
			return
		}
		// A collector turned off (GOGC=off) or set above readPercent is left as it is.
		if before := debug.SetGCPercent(readPercent); before <= 0 || before >= readPercent {
			debug.SetGCPercent(before)
		} else {
			c.before, c.reading = before, true
			c.watchRead()
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

// watchRead sets, after every collection while the read's setting is in force, the
// setting for the heap the collection left live (readSetting). The runtime tells of a
// collection by running the finalizer of an object that became garbage before it.
func (c *collector) watchRead() {
	type sentinel struct{ _ *byte } // a pointer: an object of its own, never a tiny one
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.reading {
			return // the read is over: no more tuning
		}
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		if live[0].Value.Kind() == metrics.KindUint64 {
			debug.SetGCPercent(readSetting(live[0].Value.Uint64(), c.before))
		}
		c.watchRead()
	})
}

// endRead puts back the setting the read changed, if it is still in force.
func (c *collector) endRead() {
	c.mu.Lock()
	defer c.mu.Unlock()
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
