//go:build !amd64 || noasm

package vec

// archImpl: no assembly kernels in this build.
func archImpl(string) *impl { return nil }

// mix32Kernel and mix64Kernel are never called in this build (f64Lanes is 0).
func mix32Kernel(string, int, int, *[4]*float32, *[8]*float32, int, *float64) {
	panic("vec: no Mix kernel in this build")
}

func mix64Kernel(string, int, int, *[4]*float64, *[8]*float64, int, *float64) {
	panic("vec: no Mix kernel in this build")
}
