package imagedata

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"holdgo/internal/budget"
)

// readMaybeGzip returns the content of path, gunzipped if it starts with the
// gzip magic bytes.
func readMaybeGzip(path string) ([]byte, error) {
	f, _, err := budget.Open(path)
	if err != nil {
		return nil, fmt.Errorf("imagedata: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("imagedata: %s: bad gzip stream: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	limit := min(int64(MaxBytes)+1<<20, budget.Limit()) // pixels and a header; more is an inflating bomb
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, fmt.Errorf("imagedata: %s: inflates to more than %s, %w (raise --max-memory if it is genuine)", path, budget.Format(limit), budget.ErrExceeded)
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("imagedata: %s: truncated gzip stream", path)
		}
		return nil, fmt.Errorf("imagedata: %s: %w", path, err)
	}
	return b, nil
}

// parseIDX checks an IDX header (magic 0x0000_08_ND: unsigned bytes, ND
// dimensions) and returns the dimensions and the payload.
func parseIDX(path string, b []byte, wantDims int) ([]int, []byte, error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("imagedata: %s: %d bytes is too short for an IDX header", path, len(b))
	}
	if b[0] != 0 || b[1] != 0 || b[2] != 0x08 {
		return nil, nil, fmt.Errorf("imagedata: %s: not an IDX file of unsigned bytes (magic % x)", path, b[:4])
	}
	nd := int(b[3])
	if nd != wantDims {
		return nil, nil, fmt.Errorf("imagedata: %s: IDX file with %d dimensions, want %d", path, nd, wantDims)
	}
	if len(b) < 4+4*nd {
		return nil, nil, fmt.Errorf("imagedata: %s: truncated IDX header", path)
	}
	dims := make([]int, nd)
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(b[4+4*i:]))
	}
	size, err := shapeSize(dims)
	if err != nil {
		return nil, nil, fmt.Errorf("imagedata: %s: IDX %w", path, err)
	}
	payload := b[4+4*nd:]
	if len(payload) != size {
		what := "truncated"
		if len(payload) > size {
			what = "has trailing bytes"
		}
		return nil, nil, fmt.Errorf("imagedata: %s: %s: %d data bytes for dimensions %v (want %d)", path, what, len(payload), dims, size)
	}
	return dims, payload, nil
}

// ReadIDXImages reads an IDX3 image file (N, H, W), raw or gzip, as 1-channel
// images.
func ReadIDXImages(path string) (*Dataset, error) {
	b, err := readMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	dims, pix, err := parseIDX(path, b, 3)
	if err != nil {
		return nil, err
	}
	return &Dataset{N: dims[0], C: 1, H: dims[1], W: dims[2], Pix: pix, name: path}, nil
}

// ReadIDXLabels reads an IDX1 label file, raw or gzip.
func ReadIDXLabels(path string) ([]int, error) {
	b, err := readMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	_, raw, err := parseIDX(path, b, 1)
	if err != nil {
		return nil, err
	}
	labels := make([]int, len(raw))
	for i, v := range raw {
		labels[i] = int(v)
	}
	return labels, nil
}
