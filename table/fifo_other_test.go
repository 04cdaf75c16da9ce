//go:build !unix

package table

import "errors"

// mkfifo cannot make a named pipe here.
func mkfifo(string) error { return errors.ErrUnsupported }
