//go:build unix && !linux

package supervise

import (
	"os"
	"syscall"
)

// pdeathsig says whether the child dies with the supervisor.
const pdeathsig = false

// forwarded are the signals the supervisor passes on to the child.
var forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// childAttr starts the child as the system does by default (these systems have no
// parent-death signal: the child outlives a supervisor killed with SIGKILL).
func childAttr() *syscall.SysProcAttr { return nil }
