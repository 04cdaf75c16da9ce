//go:build linux

package supervise

import (
	"os"
	"syscall"
)

// pdeathsig says whether the child dies with the supervisor.
const pdeathsig = true

// forwarded are the signals the supervisor passes on to the child.
var forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// childAttr starts the child in a process group of its own, so that a terminal's
// interrupt reaches it once, through the supervisor, and kills it when the supervisor
// dies (killed with SIGKILL, say).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
