package job

import "time"

// CPUAttrs is what the log says of a stage's use of the cores, for a stage that ran
// from a to b (wall clock) while the process's CPU time (ProcessCPU) went from ca to
// cb: its CPU milliseconds ("cpu_ms", every thread of the process, the garbage
// collector's included) and their ratio to its wall time ("cores": how many cores it
// kept busy on average). Nothing where the system does not tell the CPU time.
func CPUAttrs(a, b time.Time, ca, cb time.Duration) []any {
	if ca == 0 && cb == 0 {
		return nil
	}
	cpu := float64((cb - ca).Microseconds()) / 1000
	cores := 0.0
	if wall := Millis(a, b); wall > 0 {
		cores = float64(int(cpu/wall*100+0.5)) / 100
	}
	return []any{"cpu_ms", cpu, "cores", cores}
}
