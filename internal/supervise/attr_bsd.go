//go:build unix && !linux

package supervise

import (
	"os"
	"syscall"
)

// forwarded are the signals the supervisor passes on to the child.
var forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// childAttr starts the child as the system does by default (these systems have no
// parent-death signal: a child whose supervisor was killed with SIGKILL stops at the
// end of its lifeline, see orphaned).
func childAttr() *syscall.SysProcAttr { return nil }
