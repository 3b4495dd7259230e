//go:build !cuda

package cuda

// Open reports ErrNotBuilt: this binary has no CUDA driver backend (build with -tags cuda).
func Open(ordinal int) (*Device, error) { return nil, ErrNotBuilt }

// DeviceCount reports ErrNotBuilt: this binary sees no GPU.
func DeviceCount() (int, error) { return 0, ErrNotBuilt }
