package cuda

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"holdgo/kernels"
)

// The implicit convolutions' tile (64 or 128) comes from a measured table where one exists for the
// GPU and the kernels at hand, and from the shape rule of convPlan otherwise. A table is made on the
// GPU by holdctl bench conv --tiles FILE (each shape, pass and tensor-core precision of a model's
// training step timed at both tiles, the faster kept) and committed into convtiles.json; it applies
// only to the GPU it was measured on (its DeviceName, which names the PTX architecture) and to the
// kernels it timed (a hash of conv.ptx): after a kernel change a stale table is ignored, not
// trusted. So every run on one GPU model and build makes the same choices.

// ConvTileTable is one measured table.
type ConvTileTable struct {
	GPU     string         `json:"gpu"`     // the backend's DeviceName ("NVIDIA H100 80GB HBM3 (sm_90 PTX)")
	Kernels string         `json:"kernels"` // ConvKernelsHash of the timed build
	Tiles   map[string]int `json:"tiles"`   // ConvTileKey → 64 or 128
}

// ConvTileKey names one convolution pass at one precision ("tf32" or "bf16") in a ConvTileTable.
func ConvTileKey(g ConvGeom, pass int, prec string) string {
	return fmt.Sprintf("%s %s %d,%d,%d,%d,%d,%d,%d,%d", prec, [3]string{"fwd", "dgrad", "wgrad"}[pass], g.N, g.C, g.H, g.W, g.O, g.K, g.S, g.P)
}

// ConvKernelsHash identifies the convolution kernels of this build: the first 16 hex digits of the
// SHA-256 of the sm_90 conv.ptx.
var ConvKernelsHash = sync.OnceValue(func() string {
	mods, err := kernels.PTX(kernels.Archs[len(kernels.Archs)-1])
	if err != nil {
		return "unknown"
	}
	h := sha256.Sum256([]byte(mods["conv"]))
	return hex.EncodeToString(h[:8])
})

//go:embed convtiles.json
var committedTiles []byte

// committedTileTable returns the committed table for gpu and this build's kernels, or nil.
func committedTileTable(gpu string) (map[string]int, error) {
	var tables []ConvTileTable
	if err := json.Unmarshal(committedTiles, &tables); err != nil {
		return nil, fmt.Errorf("cuda: convtiles.json: %w", err)
	}
	for _, t := range tables {
		if t.GPU == gpu && t.Kernels == ConvKernelsHash() {
			if err := checkTiles(t.Tiles); err != nil {
				return nil, fmt.Errorf("cuda: convtiles.json, %s: %w", gpu, err)
			}
			return t.Tiles, nil
		}
	}
	return nil, nil
}

func checkTiles(tiles map[string]int) error {
	for k, v := range tiles {
		if v != 64 && v != 128 {
			return fmt.Errorf("tile %d for %q (want 64 or 128)", v, k)
		}
	}
	return nil
}

// precName names a tensor-core precision of convPrecision in ConvTileKey ("" for FP32, which has
// no table).
func precName(prec int) string {
	return [3]string{"", "tf32", "bf16"}[prec]
}
