package main

import (
	"errors"
	"log/slog"

	"sanitizer/internal/safe"
)

// logStack writes the stack of a recovered panic that err carries, if any, to log at
// debug level: the message names the defect, the debug log says where it happened.
func logStack(log *slog.Logger, err error) {
	var pe *safe.PanicError
	if log != nil && errors.As(err, &pe) {
		log.Debug("internal error", "stack", string(pe.Stack))
	}
}
