//go:build unix

package supervise

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envProgram makes the test binary run, supervised, the program of that name instead
// of the tests.
const envProgram = "SUPERVISE_TEST_PROGRAM"

// programs are what the supervised test binary may run: each returns its status, or
// ends its process some other way.
var programs = map[string]func() int{
	"ok":  func() int { return 0 },
	"bad": func() int { return 2 },
	"unattainable": func() int {
		fmt.Println("the models cannot be met")
		return 3
	},
	"panic": func() int { panic("a defect") },
	// The Go runtime's fatal error, exit status 2: the stack overflows.
	"overflow": func() int {
		debug.SetMaxStack(1 << 20)
		var f func(int) int
		f = func(n int) int { return f(n+1) + 1 }
		return f(0)
	},
	// Exits with status 2 by another route than returning it.
	"exit2": func() int { os.Exit(2); return 0 },
	// Waits for SIGTERM, then returns 5: the supervisor forwarded it.
	"term": func() int {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Println("ready", os.Getpid())
		<-c
		return 5
	},
	// Takes SIGTERM and goes on as if it had not seen it (stuck where it does not look
	// for a stop).
	"stuck": func() int {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM)
		fmt.Println("ready", os.Getpid())
		time.Sleep(time.Minute)
		return 0
	},
	// Prints its pid and sleeps: killed with its supervisor.
	"sleep": func() int {
		fmt.Println("ready", os.Getpid())
		time.Sleep(time.Minute)
		return 0
	},
}

func TestMain(m *testing.M) {
	if name := os.Getenv(envProgram); name != "" {
		Main("prog", programs[name])
	}
	os.Exit(m.Run())
}

// start starts the test binary supervising the program name.
func start(t *testing.T, name string) (*exec.Cmd, *bufio.Reader, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envProgram+"="+name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(out), &stderr
}

// exitCode waits for cmd and returns its exit status.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

// TestStatus: the status a program returns is the supervised process's; a process
// that ends any other way (a panic, the runtime's fatal error, an exit that skips the
// report: all status 2 unsupervised) exits 1 with a message saying it crashed.
func TestStatus(t *testing.T) {
	for _, c := range []struct {
		program string
		code    int
		stdout  string
		stderr  string
	}{
		{"ok", 0, "", ""},
		{"bad", 2, "", ""},
		{"unattainable", 3, "the models cannot be met", ""},
		{"panic", Crashed, "", "prog: internal error: the run's process ended with status 2"},
		{"overflow", Crashed, "", "stack overflow"},
		{"exit2", Crashed, "", "prog: internal error"},
	} {
		t.Run(c.program, func(t *testing.T) {
			cmd, out, stderr := start(t, c.program)
			all, _ := out.ReadString(0)
			code := exitCode(t, cmd)
			if code != c.code || !strings.Contains(all, c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, all, stderr.String(), c.code, c.stdout, c.stderr)
			}
			if c.code != Crashed && stderr.Len() > 0 {
				t.Errorf("stderr %q", stderr.String())
			}
		})
	}
}

// readyPid reads the child's "ready PID" line.
func readyPid(t *testing.T, out *bufio.Reader) int {
	t.Helper()
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	if err != nil {
		t.Fatalf("line %q", line)
	}
	return pid
}

// TestSignalForwarded: SIGTERM sent to the supervisor reaches the program, whose status
// is then the supervisor's.
func TestSignalForwarded(t *testing.T) {
	cmd, out, stderr := start(t, "term")
	if pid := readyPid(t, out); pid == cmd.Process.Pid {
		t.Fatal("the program runs in the supervisor's process")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != 5 {
		t.Errorf("exit %d, want the program's 5; stderr %q", code, stderr.String())
	}
}

// TestChildDiesWithSupervisor: a supervisor killed with SIGKILL takes its child along.
func TestChildDiesWithSupervisor(t *testing.T) {
	cmd, out, _ := start(t, "sleep")
	pid := readyPid(t, out)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	exitCode(t, cmd)
	for range 2000 {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatal("the child outlived its killed supervisor")
}

// alive reports whether process pid runs: not gone, nor a zombie nobody has reaped
// (where the system's first process does not reap, an orphan's end leaves one).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: the signal's answer stands
	}
	// pid (comm) state …: the state follows the last ')'.
	at := strings.LastIndexByte(string(stat), ')')
	return at < 0 || at+2 >= len(stat) || stat[at+2] != 'Z'
}

// TestOrphanStops: a supervised child whose lifeline ends (its supervisor gone, on a
// system without a parent-death signal) stops as at a SIGTERM: the program "term"
// returns 5 when it gets one. The test plays the supervisor, without a parent-death
// signal.
func TestOrphanStops(t *testing.T) {
	statusR, statusW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer statusR.Close()
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envProgram+"=term", fmt.Sprintf("%s=%d", envChild, statusFD))
	cmd.ExtraFiles = []*os.File{statusW, lifeR}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	statusW.Close()
	lifeR.Close()
	readyPid(t, bufio.NewReader(out))
	lifeW.Close() // the supervisor is gone
	if code := exitCode(t, cmd); code != 5 || readStatus(statusR) != 5 {
		t.Errorf("exit %d, want the program's 5 at the SIGTERM it sends itself", code)
	}
}

// TestSecondSignalKills: a program that goes on after the first SIGTERM is killed at
// the second, and the supervisor exits 1 saying so.
func TestSecondSignalKills(t *testing.T) {
	cmd, out, stderr := start(t, "stuck")
	pid := readyPid(t, out)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the first one reaches the child, which goes on
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the child ended at the first signal: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != Crashed || !strings.Contains(stderr.String(), "stopped at once at a second signal") {
		t.Errorf("exit %d, stderr %q; want %d and the second signal named", code, stderr.String(), Crashed)
	}
}
