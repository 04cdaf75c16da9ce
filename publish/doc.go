// Package publish puts a run's files in place and leaves nothing else behind: it checks
// a destination before the run reads anything, writes through a temporary beside the
// destination that the live process holds, sweeps the temporaries that dead runs left
// for that destination, and moves a finished file or folder into place in one rename
// that it syncs to disk. WriteFile does all of it for one file; Prepare stops short of
// the rename, for files published together.
//
// A temporary is named .NAME.sanitize-PID-RAND.tmp beside its destination NAME and is
// held by an exclusive advisory lock (flock) for as long as its run lives: a
// temporary whose lock can be taken belongs to a run that died, and is removed.
//
// It imports, of this module, only fault (docs/design.md's package table): it knows
// nothing of what the files hold.
package publish

import "errors"

// ErrExists is matched by the error for a destination that exists where the run was
// not asked to replace it (the command line adds how to ask).
var ErrExists = errors.New("exists")
