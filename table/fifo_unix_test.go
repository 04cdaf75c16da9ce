//go:build unix

package table

import "syscall"

// mkfifo makes a named pipe at path: an existing file that is not a regular file.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
