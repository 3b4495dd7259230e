//go:build !linux

package atomicfile

import "errors"

// exchange has no atomic form here: WriteDir falls back to renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
