//go:build !amd64 || noasm

package vec

// archImpl: no assembly kernels in this build.
func archImpl(string) *impl { return nil }
