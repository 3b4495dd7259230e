//go:build !unix

package runlock

import (
	"errors"
	"os"
)

var errBusy = errors.New("locked")

const (
	noFollow = 0
	nonBlock = 0
)

func isLoop(error) bool { return false }

// tryLock has no flock to call on this system: the lock file still records
// the owner, but two processes are not kept apart.
func tryLock(*os.File) error { return nil }

func unlock(*os.File) {}
