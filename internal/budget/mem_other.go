//go:build !linux

package budget

func physicalMemory() int64    { return 0 }
func addressSpaceLimit() int64 { return 0 }
