package job

import (
	"runtime"
	"testing"
	"time"
)

// TestCPUAttrs: a stage's CPU time is the process's CPU time spent between its ends,
// and "cores" its ratio to the wall time; busy work on other goroutines is counted
// (at least a fifth of its wall time: the host may be busy with others).
func TestCPUAttrs(t *testing.T) {
	if got := CPUAttrs(time.Unix(0, 0), time.Unix(1, 0), 0, 0); got != nil {
		t.Errorf("without CPU times: %v, want nothing", got)
	}
	got := CPUAttrs(time.Unix(0, 0), time.Unix(2, 0), time.Second, 4*time.Second)
	if len(got) != 4 || got[0] != "cpu_ms" || got[1] != 3000.0 || got[2] != "cores" || got[3] != 1.5 {
		t.Errorf("3 s of CPU in 2 s: %v, want cpu_ms 3000, cores 1.5", got)
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		return
	}
	before := ProcessCPU()
	done := make(chan bool)
	spin := func() {
		x := 0
		for start := time.Now(); time.Since(start) < 100*time.Millisecond; x++ {
		}
		done <- x > 0
	}
	go spin()
	go spin()
	<-done
	<-done
	if used := ProcessCPU() - before; used < 20*time.Millisecond {
		t.Errorf("two goroutines spinning 100 ms each: %v of CPU counted", used)
	}
}
