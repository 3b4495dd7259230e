//go:build noasm

package main

// The CLI tests build the binary with the test's noasm tag, so that both CI runs test their own build.
func init() { buildTags = append(buildTags, "noasm") }
