package main

import (
	"runtime/debug"
	"testing"

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
