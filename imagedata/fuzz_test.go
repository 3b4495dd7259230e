package imagedata

import (
	"archive/tar"
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"
)

// Fuzz targets of every reader of outside bytes in this package. Plain
// `go test` runs their seeds (f.Add and testdata/fuzz/FuzzX, which holds the
// cases of issue 17); `make fuzz` fuzzes each for a minute.

// idxOverflow is the 16-byte IDX3 header of issue 17: every dimension 2²⁸,
// within the old per-dimension bound, whose product 2⁸⁴ wrapped to 0 and so
// matched the empty payload.
var idxOverflow = idxBytes([]int{1 << 28, 1 << 28, 1 << 28}, nil)

func FuzzIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 3}, make([]byte, 12)))
	f.Add(idxBytes([]int{3}, []byte{1, 2, 3}))
	f.Add(idxOverflow)
	f.Add(idxBytes([]int{0, 28, 28}, nil))
	f.Add(idxBytes([]int{1 << 16, 1 << 16, 1 << 16}, nil))
	f.Add([]byte{0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, nd := range []int{1, 3} {
			dims, payload, err := parseIDX("fuzz", b, nd)
			if err != nil {
				continue
			}
			size := 1
			for _, d := range dims {
				if d < 1 {
					t.Fatalf("accepted dimensions %v", dims)
				}
				size *= d
			}
			if size != len(payload) || size > MaxBytes {
				t.Fatalf("dimensions %v accepted with %d payload bytes", dims, len(payload))
			}
		}
	})
}

func FuzzCIFAR10(f *testing.F) {
	rec := make([]byte, cifarRecord)
	rec[0] = 9
	f.Add(rec)
	f.Add(append(append([]byte{}, rec...), rec...))
	f.Add(rec[:cifarRecord-1])
	f.Add([]byte{})
	bad := append([]byte{}, rec...)
	bad[0] = 10
	f.Add(bad)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &Dataset{C: 3, H: cifarSide, W: cifarSide}
		if err := appendCIFAR10(d, "fuzz", b); err != nil {
			return
		}
		if len(d.Labels)*cifarRecord != len(b) || len(d.Pix) != len(d.Labels)*(cifarRecord-1) {
			t.Fatalf("%d bytes gave %d labels and %d pixels", len(b), len(d.Labels), len(d.Pix))
		}
	})
}

// checkDecoded asserts what decodeImages promises of a data set it returns.
func checkDecoded(t *testing.T, d *Dataset, n int) {
	t.Helper()
	if d.N != n || (d.C != 1 && d.C != 3) || d.H < 1 || d.W < 1 || d.H > MaxSide || d.W > MaxSide {
		t.Fatalf("decoded %d images of %d×%d×%d from %d files", d.N, d.C, d.H, d.W, n)
	}
	if len(d.Pix) != d.N*d.Dimension() {
		t.Fatalf("%d pixel bytes for %d images of %d values", len(d.Pix), d.N, d.Dimension())
	}
}

// tinyImages returns a 3×2 gray PNG and a 3×2 colour JPEG.
func tinyImages(t testing.TB) (pngData, jpegData []byte) {
	g := image.NewGray(image.Rect(0, 0, 3, 2))
	g.SetGray(1, 1, color.Gray{Y: 200})
	pngData = pngBytes(t, g)
	var buf bytes.Buffer
	rgb := image.NewRGBA(image.Rect(0, 0, 3, 2))
	rgb.Set(2, 1, color.RGBA{R: 255, A: 255})
	if err := jpeg.Encode(&buf, rgb, nil); err != nil {
		t.Fatal(err)
	}
	return pngData, buf.Bytes()
}

func FuzzImage(f *testing.F) {
	p, j := tinyImages(f)
	f.Add(p)
	f.Add(j)
	f.Add(p[:len(p)/2])
	// A PNG header declaring 2³¹−1 × 2³¹−1 pixels: must be refused before any pixel is allocated.
	f.Add(pngWithSize(p, 1<<31-1, 1<<31-1)[:33])
	f.Add(pngWithSize(p, 1<<31-1, 1<<31-1))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeImages("fuzz", []imageFile{{"a.png", b}, {"b/c.png", b}})
		if err != nil {
			return
		}
		checkDecoded(t, d, 2)
	})
}

// tarGz packs files (name, bytes) into a .tgz.
func tarGz(t testing.TB, files ...imageFile) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz(buf.Bytes())
}

func FuzzTarGz(f *testing.F) {
	p, j := tinyImages(f)
	f.Add(tarGz(f, imageFile{"x/a.png", p}, imageFile{"y/b.png", p}))
	f.Add(tarGz(f, imageFile{"a.png", p}, imageFile{"b.jpg", j}))
	f.Add(tarGz(f, imageFile{"a.txt", []byte("not an image")}))
	full := tarGz(f, imageFile{"a.png", p})
	f.Add(full[:len(full)-5])
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := readTarGzFrom("fuzz.tgz", bytes.NewReader(b))
		if err != nil || len(files) == 0 {
			return
		}
		for _, file := range files {
			if !isImageName(file.name) || strings.HasPrefix(file.name, "./") {
				t.Fatalf("kept %q", file.name)
			}
		}
		d, err := decodeImages("fuzz.tgz", files)
		if err != nil {
			return
		}
		checkDecoded(t, d, len(files))
	})
}
