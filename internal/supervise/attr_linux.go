//go:build linux

package supervise

import (
	"os"
	"syscall"
)

// forwarded are the signals the supervisor passes on to the child.
var forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// childAttr makes the child die when the supervisor dies (killed with SIGKILL, say), at
// once, before its lifeline could tell it (see orphaned).
// The child stays in the supervisor's process group, so that a terminal's job control
// (^Z, fg) stops and resumes both; a terminal's interrupt then reaches the child twice,
// once from the terminal and once forwarded, and the commands take a second one as
// the first.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
