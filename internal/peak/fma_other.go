//go:build !amd64 || noasm

package peak

// archLoops: no assembly in this build.
var archLoops []loop
