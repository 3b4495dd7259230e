//go:build unix

package runlock

import (
	"errors"
	"os"
	"syscall"
)

var errBusy = errors.New("locked")

const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)

// isLoop reports the error of opening a symbolic link with O_NOFOLLOW.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// tryLock takes an exclusive flock(2) on f without waiting.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errBusy
		}
		return err
	}
}

// unlock drops the flock of f.
func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
