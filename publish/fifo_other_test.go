//go:build !unix

package publish

import "errors"

// mkfifo cannot make a named pipe here.
func mkfifo(string) error { return errors.ErrUnsupported }
