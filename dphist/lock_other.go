//go:build !unix

package dphist

import "errors"

// lockFile is not available here: charging a ledger without a lock could lose a
// concurrent run's spend, so it is refused.
func lockFile(path string) (func(), error) {
	return nil, errors.New("ledger: file locking is not supported on this platform")
}
