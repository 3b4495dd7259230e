package imagedata

import "strings"

// SpecPath is the file or folder a data-set spec (KIND:PATH[#SUBSET]) reads; a string that is not a
// spec is returned as it is (a path already).
func SpecPath(spec string) string {
	if _, p, ok := strings.Cut(spec, ":"); ok && IsSpec(spec) {
		p, _, _ = strings.Cut(p, "#")
		return p
	}
	return spec
}

// TestSplit is the test split of a data-set spec (KIND:PATH#test), or spec itself when it names a
// subset already.
func TestSplit(spec string) string {
	if strings.Contains(spec, "#") {
		return spec
	}
	return spec + "#test"
}
