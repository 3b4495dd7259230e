//go:build !amd64 || noasm

package isa

// archLevels: no assembly in this build.
func archLevels() []string { return nil }
