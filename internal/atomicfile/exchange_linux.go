package atomicfile

import "golang.org/x/sys/unix"

// exchange swaps the directory entries a and b atomically (renameat2 RENAME_EXCHANGE, Linux 3.15+).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
