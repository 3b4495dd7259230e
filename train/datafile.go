package train

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"holdgo/data"
	"holdgo/imagedata"
	"holdgo/internal/atomicfile"
	"holdgo/internal/budget"
)

// DataFile is the run directory's copy of the training points of a run on
// a .npy file: sampling, evaluating and resuming read it, never the path
// the run was started with (which may move, or be relative to another
// working directory). The run's configuration records its SHA-256.
const DataFile = "data.npy"

// PointFile reports whether the run trains on a .npy file of points.
func (c RunConfig) PointFile() bool {
	return !imagedata.IsSpec(c.Data) && strings.HasSuffix(c.Data, ".npy")
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// StoreData copies the run's .npy points into dir/DataFile, records their
// SHA-256 and makes the run read the copy. It checks that the file holds
// points first, so a bad file writes nothing.
func (c *RunConfig) StoreData(dir string) error {
	raw, err := budget.ReadFile(c.Data)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if _, err := data.PointsFromNPY(c.Data, raw); err != nil {
		return err
	}
	dst := filepath.Join(dir, DataFile)
	if err := atomicfile.WriteFile(dst, raw); err != nil {
		return fmt.Errorf("copy the training points into the run directory: %w", err)
	}
	c.DataSHA256, c.dataFile = sha256Hex(raw), dst
	return nil
}

// UseStoredData points a stored run on a .npy file at its points: the
// file override if given (any path with the recorded content), else the
// copy dir/DataFile. A run recorded without a hash (before runs held their
// points) keeps reading its original path.
func (c *RunConfig) UseStoredData(dir, override string) error {
	if !c.PointFile() {
		if override != "" {
			return fmt.Errorf("--train-data %s: the run trains on %s, not on a .npy file of points", override, c.Data)
		}
		return nil
	}
	switch {
	case override != "":
		c.dataFile = override
	case c.DataSHA256 != "":
		c.dataFile = filepath.Join(dir, DataFile)
	}
	return nil
}

// DataPath is the file the run reads its points from (its copy, the
// --train-data override, or the original path); "" for built-in or image
// data.
func (c RunConfig) DataPath() string {
	if !c.PointFile() {
		return ""
	}
	if c.dataFile != "" {
		return c.dataFile
	}
	return c.Data
}

// openPoints reads the run's .npy points (its copy when set) and checks
// them against the recorded hash.
func (c RunConfig) openPoints() (*data.Points, error) {
	path := c.Data
	if c.dataFile != "" {
		path = c.dataFile
	}
	raw, err := budget.ReadFile(path)
	if err != nil {
		if c.dataFile != "" && c.DataSHA256 != "" {
			return nil, fmt.Errorf("the run's training points %s: %w; pass --train-data FILE with the points it was trained on (%s, sha256 %s)",
				path, err, c.Data, c.DataSHA256)
		}
		return nil, fmt.Errorf("data: %w", err)
	}
	if c.DataSHA256 != "" {
		if got := sha256Hex(raw); got != c.DataSHA256 {
			return nil, fmt.Errorf("%s has sha256 %s, but the run was trained on points with sha256 %s (%s)", path, got, c.DataSHA256, c.Data)
		}
	}
	return data.PointsFromNPY(c.Data, raw)
}
