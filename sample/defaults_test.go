package sample

import (
	"slices"
	"testing"
)

// TestImageDefaults: with nothing given an image network gets the measured best sampler and --clip 1;
// a setting that was given is kept, and without sampler only the clip is filled in.
func TestImageDefaults(t *testing.T) {
	none := func(string) bool { return false }
	s := DefaultSpec()
	chosen := s.ImageDefaults(none, true)
	if s.Method != ImageSampler || s.Grid != ImageGrid || s.NFE != ImageNFE || !s.Denoise || s.Clip != 1 {
		t.Errorf("nothing given: %+v", s)
	}
	if want := []string{"--sampler a-sde2", "--grid vpmatched", "--nfe 50", "--denoise", "--clip 1"}; !slices.Equal(chosen, want) {
		t.Errorf("chosen %q, want %q", chosen, want)
	}
	s = DefaultSpec()
	s.Method, s.Steps = "em", 7
	if chosen := s.ImageDefaults(func(f string) bool { return f == "sampler" || f == "clip" }, true); len(chosen) != 0 || s.Method != "em" || s.Clip != 0 {
		t.Errorf("--sampler and --clip given: chose %q, %+v", chosen, s)
	}
	s = DefaultSpec()
	if chosen := s.ImageDefaults(none, false); !slices.Equal(chosen, []string{"--clip 1"}) || s.Method != "lt" {
		t.Errorf("without sampler: chose %q, %+v", chosen, s)
	}
}
