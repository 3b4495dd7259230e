package imagedata

import (
	"fmt"
	"path/filepath"
	"strings"

	"holdgo/internal/budget"
)

// CIFAR-10 binary format: records of 1 label byte and 3072 pixel bytes (the
// R, G and B 32×32 planes).
const (
	cifarSide   = 32
	cifarRecord = 1 + 3*cifarSide*cifarSide
)

// CIFAR10Classes are the class names in label order.
var CIFAR10Classes = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// ReadCIFAR10 reads CIFAR-10 binary batch files into one data set.
func ReadCIFAR10(paths ...string) (*Dataset, error) {
	d := &Dataset{C: 3, H: cifarSide, W: cifarSide, Classes: CIFAR10Classes}
	for _, p := range paths {
		b, err := budget.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("imagedata: %w", err)
		}
		if err := appendCIFAR10(d, p, b); err != nil {
			return nil, err
		}
	}
	d.N = len(d.Labels)
	d.name = strings.Join(paths, ",")
	return d, nil
}

// appendCIFAR10 checks the bytes b of batch file name and appends their
// records to d.
func appendCIFAR10(d *Dataset, name string, b []byte) error {
	if len(b) == 0 || len(b)%cifarRecord != 0 {
		return fmt.Errorf("imagedata: %s: %d bytes is not a whole number of CIFAR-10 records of %d bytes (truncated or not a CIFAR-10 batch)",
			name, len(b), cifarRecord)
	}
	if len(d.Pix)+len(b) > MaxBytes {
		return fmt.Errorf("imagedata: %s: the batches hold more than %d bytes (the cap of %d GiB)", name, uint64(MaxBytes), MaxBytes>>30)
	}
	for off := 0; off < len(b); off += cifarRecord {
		if b[off] > 9 {
			return fmt.Errorf("imagedata: %s: record %d has label %d (want 0–9): not a CIFAR-10 batch", name, off/cifarRecord, b[off])
		}
		d.Labels = append(d.Labels, int(b[off]))
		d.Pix = append(d.Pix, b[off+1:off+cifarRecord]...)
	}
	return nil
}

func openCIFAR10(path, subset string) (*Dataset, error) {
	if strings.HasSuffix(path, ".bin") {
		return ReadCIFAR10(path)
	}
	var files []string
	switch subset {
	case "", "train":
		for i := 1; i <= 5; i++ {
			files = append(files, filepath.Join(path, fmt.Sprintf("data_batch_%d.bin", i)))
		}
	case "test":
		files = []string{filepath.Join(path, "test_batch.bin")}
	default:
		return nil, fmt.Errorf("imagedata: CIFAR-10 subset %q (want train or test)", subset)
	}
	return ReadCIFAR10(files...)
}
