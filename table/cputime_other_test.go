//go:build !unix

package table

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
