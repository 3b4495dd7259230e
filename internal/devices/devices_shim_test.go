//go:build cudashim && !cuda

package devices

import "testing"

// TestShimRankLine: on holdctl-shim --device cuda is the host shim, which has no PCI bus id.
func TestShimRankLine(t *testing.T) {
	dev, err := Open("cuda")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := RankLine(0, 2, "node1", dev), "rank 0 of 2: host node1, device shim (bus id none)"; got != want {
		t.Errorf("RankLine: %q, want %q", got, want)
	}
	name, err := ForRank("cuda", 2, func(k string) (string, bool) { return "1", k == "LOCAL_RANK" }, Count)
	if err != nil || name != "cuda:0" {
		t.Errorf("local rank 1 on holdctl-shim: %q, %v; want cuda:0 (its one device)", name, err)
	}
}
