//go:build !cuda

package cuda

// Open reports ErrNotBuilt: this binary has no CUDA driver backend (build with -tags cuda).
func Open(ordinal int) (*Device, error) { return nil, ErrNotBuilt }
