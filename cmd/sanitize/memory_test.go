package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"sanitizer/job"
)

// gcPercent is the collector's setting, left as it was.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestCollectorStages: the read collects at readPercent, the search at half the
// setting before the read, the write and after at that setting again; a run that
// ends during the read or the search gets it back too.
func TestCollectorStages(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(60))
	c := &collector{}
	for _, step := range []struct {
		stage job.Stage
		want  int
	}{{job.StageRead, readPercent}, {job.StageSearch, 30}, {job.StageWrite, 60}, {job.StageVerify, 60}} {
		c.at(step.stage)
		if got := gcPercent(); got != step.want {
			t.Fatalf("at %s: GOGC %d, want %d", step.stage, got, step.want)
		}
	}
	for _, user := range []int{-1, readPercent, 400} { // off, or already collecting as seldom
		debug.SetGCPercent(user)
		c := &collector{}
		c.at(job.StageRead)
		if got := gcPercent(); got != user {
			t.Fatalf("GOGC %d before the read: %d during it", user, got)
		}
		c.restore()
	}
	debug.SetGCPercent(60)
	for _, last := range []job.Stage{job.StageRead, job.StageSearch} {
		c := &collector{}
		c.at(job.StageRead)
		c.at(last)
		c.restore()
		if got := gcPercent(); got != 60 {
			t.Fatalf("a run ending at %s: GOGC %d after, want 60", last, got)
		}
	}
}

// TestReadSetting: the read collects at readPercent while the live heap is small, so
// that the heap grows at most readHeadroom above it beyond, and never more often than
// the run's own setting.
func TestReadSetting(t *testing.T) {
	h := readHeadroom
	for _, c := range []struct {
		live        uint64
		floor, want int
	}{
		{0, 50, readPercent},
		{h / 4, 50, readPercent},
		{h / 2, 50, readPercent},
		{h, 50, 100},
		{2 * h, 50, 50},
		{4 * h, 50, 50},
		{4 * h, 10, 25},
		{h, 300, 300},
	} {
		if got := readSetting(c.live, c.floor); got != c.want {
			t.Errorf("live %d MiB, floor %d: GOGC %d, want %d", c.live>>20, c.floor, got, c.want)
		}
	}
}

// TestReadTunedAfterCollection: during the read, a collection that leaves more live
// than readHeadroom/2 lowers the setting (readSetting); once the read ends, the
// setting before it is back and collections change it no more.
func TestReadTunedAfterCollection(t *testing.T) {
	defer func(h uint64) { readHeadroom = h }(readHeadroom)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	readHeadroom = 8 << 20
	c := &collector{}
	c.at(job.StageRead)
	live := make([]byte, 32<<20)
	deadline := time.Now().Add(time.Minute)
	for gcPercent() == readPercent && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	// 32 MiB and the test's own live: at most 8·100/32.
	if got := gcPercent(); got <= 10 || got > 25 {
		t.Errorf("32 MiB live, 8 MiB of headroom: GOGC %d during the read, want 11 … 25", got)
	}
	c.at(job.StageSearch)
	c.restore()
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := gcPercent(); got != 10 {
		t.Errorf("after the read: GOGC %d, want 10", got)
	}
	runtime.KeepAlive(live)
}
