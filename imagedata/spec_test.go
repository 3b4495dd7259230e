package imagedata

import "testing"

func TestSpecPathAndTestSplit(t *testing.T) {
	for spec, want := range map[string]string{
		"fashion-mnist:/data/fm#test": "/data/fm", "images:x.tgz": "x.tgz", "run/dir": "run/dir",
		"c:/windows": "c:/windows", "": "",
	} {
		if got := SpecPath(spec); got != want {
			t.Errorf("SpecPath(%q) = %q, want %q", spec, got, want)
		}
	}
	for spec, want := range map[string]string{
		"cifar10:/d": "cifar10:/d#test", "cifar10:/d#train": "cifar10:/d#train", "images:/f": "images:/f#test",
	} {
		if got := TestSplit(spec); got != want {
			t.Errorf("TestSplit(%q) = %q, want %q", spec, got, want)
		}
	}
}
