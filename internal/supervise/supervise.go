//go:build unix

// Package supervise runs a command-line program in a child process of itself, so that
// the program's exit status always means what the program chose. The Go runtime ends a
// process that runs out of memory, deadlocks or panics outside any recover with exit
// status 2, the status the command line keeps for bad input; a nightly job that reads
// a crash as "the input was bad" would not page anyone. The supervising process passes
// the child's status on when the child reported it, and exits 1 (an internal error)
// when the child ended any other way.
//
// It imports nothing of this module: only cmd/sanitize uses it, around everything
// else.
package supervise

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// envChild marks the child process; its value is the descriptor of the pipe the child
// reports its exit status on.
const envChild = "SANITIZE_SUPERVISED_STATUS_FD"

// The child's descriptors of its pipes with the supervisor (ExtraFiles): the status
// pipe it reports on, and the lifeline, which reads the end of file when the
// supervisor is gone.
const (
	statusFD   = 3
	lifelineFD = 4
)

// orphanGrace is how long a child whose supervisor died has to stop at the SIGTERM it
// sends itself before it exits anyway.
const orphanGrace = 10 * time.Second

// Crashed is the exit status of a program whose process ended without reporting the
// status it chose: an internal error.
const Crashed = 1

// Main runs program, which returns the exit status, and exits with that status. It
// runs program in a child process of this executable (same arguments, standard
// streams and environment) and waits for it, forwarding the first SIGINT, SIGTERM,
// SIGHUP or SIGQUIT to it and killing it at a second; the child stops when this
// process dies (see orphaned). When the child ends without
// reporting a status, Main writes "name: internal error: …" to stderr and exits with
// Crashed. When no child can be started, program runs in this process.
func Main(name string, program func() int) {
	if Supervised() {
		os.Exit(child(program))
	}
	code, err := supervise(name)
	if err != nil {
		os.Exit(program())
	}
	os.Exit(code)
}

// Supervised reports whether this process is a supervised child (its status is
// reported to a supervisor).
func Supervised() bool { return os.Getenv(envChild) != "" }

// child runs program in the child process and reports its status to the supervisor.
func child(program func() int) int {
	os.Unsetenv(envChild)
	syscall.CloseOnExec(statusFD) // not for processes the program may start
	syscall.CloseOnExec(lifelineFD)
	status := os.NewFile(statusFD, "status")
	if life := os.NewFile(lifelineFD, "lifeline"); life != nil {
		go orphaned(life)
	}
	code := program()
	if status != nil {
		status.Write([]byte{byte(code)})
		status.Close()
	}
	return code
}

// orphaned waits for the end of the lifeline, which comes when the supervisor is gone
// (killed with SIGKILL, say: on Linux the parent-death signal has already killed this
// process), then stops the run as a signal would, and exits after orphanGrace if it
// has not: a run nobody waits for must not publish late.
func orphaned(life *os.File) {
	if _, err := io.Copy(io.Discard, life); err != nil {
		return // no lifeline: not a supervisor's child
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	time.Sleep(orphanGrace)
	os.Exit(Crashed)
}

// supervise starts the child and returns the status to exit with; an error when the
// child could not be started.
func supervise(name string) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	lifeR, lifeW, err := os.Pipe() // this process holds lifeW until it ends
	if err != nil {
		w.Close()
		return 0, err
	}
	defer lifeW.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w, lifeR}
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", envChild, statusFD))
	cmd.SysProcAttr = childAttr()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	// The child is told to die with the thread that started it (Linux's parent-death
	// signal): that thread stays this goroutine's until the child is waited for.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	w.Close()
	lifeR.Close()
	if err != nil {
		return 0, err
	}
	done := make(chan struct{})
	forced := make(chan struct{})
	go forward(cmd.Process, sigs, done, forced)
	reported := make(chan int, 1)
	go func() { reported <- readStatus(r) }()
	waitErr := cmd.Wait()
	close(done)
	return decide(name, cmd.ProcessState, waitErr, <-reported, forced), nil
}

// forward sends the first signal received to the child, which stops at it as soon as
// it can; at a second one it kills the child at once (a child stuck where it does not
// look for a stop, say), and closes forced. It returns when done is closed. The child
// may receive a signal twice (from a terminal, or a service manager that signals every
// process of the group, and forwarded): it takes the second as the first, and only the
// supervisor counts.
func forward(p *os.Process, sigs <-chan os.Signal, done <-chan struct{}, forced chan<- struct{}) {
	for n := 0; ; n++ {
		select {
		case s := <-sigs:
			if n == 0 {
				p.Signal(s)
				continue
			}
			close(forced)
			p.Kill()
			for { // the child is gone: later signals are let go
				select {
				case <-sigs:
				case <-done:
					return
				}
			}
		case <-done:
			return
		}
	}
}

// readStatus reads the status the child reports: −1 when it reported none.
func readStatus(r io.Reader) int {
	var b [1]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return -1
	}
	return int(b[0])
}

// decide is the status to exit with for a child that ended in state (waitErr the
// waiting's error) having reported the status reported (−1: none); forced is closed
// when the supervisor killed it at a second signal.
func decide(name string, state *os.ProcessState, waitErr error, reported int, forced <-chan struct{}) int {
	var exit *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exit) {
		fmt.Fprintf(os.Stderr, "%s: internal error: waiting for the run: %v\n", name, waitErr)
		return Crashed
	}
	code := state.ExitCode()
	if code >= 0 && code == reported {
		return code
	}
	how := fmt.Sprintf("ended with status %d before it finished (a crash of the Go runtime: out of memory, a deadlock or a panic, whose message is above)", code)
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		how = fmt.Sprintf("was killed by %s", ws.Signal())
	}
	select {
	case <-forced:
		how = "was stopped at once at a second signal"
	default:
	}
	fmt.Fprintf(os.Stderr, "%s: internal error: the run's process %s; what it had not published it did not publish, and the next run removes its temporaries\n", name, how)
	return Crashed
}
