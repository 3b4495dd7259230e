//go:build !linux

package hugepage

// advise does nothing: transparent huge pages are a Linux feature.
func advise([]float32) {}
