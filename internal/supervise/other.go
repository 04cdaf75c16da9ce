//go:build !unix

package supervise

import "os"

// Main runs program in this process and exits with the status it returns: these
// systems start no supervised child.
func Main(name string, program func() int) { os.Exit(program()) }

// Supervised reports whether this process is a supervised child: never here.
func Supervised() bool { return false }
