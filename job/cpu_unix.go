//go:build unix

package job

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time the process has used so far, user and system, all its
// threads (0 when the system does not tell).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
