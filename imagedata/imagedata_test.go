package imagedata

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/rng"
)

func idxBytes(dims []int, payload []byte) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, payload...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func write(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestIDXRawAndGzip(t *testing.T) {
	dir := t.TempDir()
	pix := make([]byte, 3*2*4)
	for i := range pix {
		pix[i] = byte(i * 10)
	}
	write(t, filepath.Join(dir, "raw", "train-images-idx3-ubyte"), idxBytes([]int{3, 2, 4}, pix))
	write(t, filepath.Join(dir, "raw", "train-labels-idx1-ubyte"), idxBytes([]int{3}, []byte{7, 1, 4}))
	write(t, filepath.Join(dir, "gz", "train-images-idx3-ubyte.gz"), gz(idxBytes([]int{3, 2, 4}, pix)))
	for _, sub := range []string{"raw", "gz"} {
		d, err := Open("mnist:"+filepath.Join(dir, sub), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d.N != 3 || d.C != 1 || d.H != 2 || d.W != 4 || !bytes.Equal(d.Pix, pix) {
			t.Fatalf("%s: read %d×%d×%d×%d", sub, d.N, d.C, d.H, d.W)
		}
		if sub == "raw" && (len(d.Labels) != 3 || d.Labels[2] != 4) {
			t.Fatalf("labels %v", d.Labels)
		}
	}
}

func TestBadFilesNameTheFile(t *testing.T) {
	dir := t.TempDir()
	good := idxBytes([]int{2, 2, 2}, make([]byte, 8))
	cases := map[string][]byte{
		"truncated.idx":   good[:len(good)-1],
		"trailing.idx":    append(append([]byte{}, good...), 1),
		"badmagic.idx":    append([]byte{1, 2, 3, 4}, good[4:]...),
		"labels.idx":      idxBytes([]int{8}, make([]byte, 8)),
		"shortgz.idx":     gz(good)[:20],
		"tiny.idx":        {0, 0},
		"cifar_trunc.bin": make([]byte, cifarRecord+5),
	}
	for name, b := range cases {
		p := write(t, filepath.Join(dir, name), b)
		var err error
		if strings.HasSuffix(name, ".bin") {
			_, err = Open("cifar10:"+p, Options{})
		} else {
			_, err = Open("idx:"+p, Options{})
		}
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
	}
	for _, spec := range []string{"mnist:" + filepath.Join(dir, "nowhere"), "cifar10:" + filepath.Join(dir, "nowhere"), "images:" + filepath.Join(dir, "none.tgz")} {
		if _, err := Open(spec, Options{}); err == nil || !strings.Contains(err.Error(), "nowhere") && !strings.Contains(err.Error(), "none.tgz") {
			t.Errorf("%s: error %v", spec, err)
		}
	}
	if _, err := Open("svhn:/x", Options{}); err == nil {
		t.Error("unknown kind accepted")
	}
}

func TestCIFAR10Batches(t *testing.T) {
	dir := t.TempDir()
	rec := make([]byte, 2*cifarRecord)
	rec[0], rec[cifarRecord] = 3, 9
	rec[1] = 200                       // image 0, R plane, pixel (0,0)
	rec[cifarRecord+1+1024+31] = 100   // image 1, G plane, pixel (0,31)
	rec[cifarRecord+1+2048+32*31] = 50 // image 1, B plane, pixel (31,0)
	for i := 1; i <= 5; i++ {
		write(t, filepath.Join(dir, "data_batch_"+string(rune('0'+i))+".bin"), rec)
	}
	d, err := Open("cifar10:"+dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 10 || d.C != 3 || d.Labels[1] != 9 || d.Pixels(1)[1024+31] != 100 || d.Pixels(1)[2048+32*31] != 50 || d.Pixels(0)[0] != 200 {
		t.Fatalf("CIFAR-10 read wrong: N %d labels %v", d.N, d.Labels[:2])
	}
	rec[cifarRecord] = 12
	p := write(t, filepath.Join(dir, "bad.bin"), rec)
	if _, err := Open("cifar10:"+p, Options{}); err == nil || !strings.Contains(err.Error(), "label 12") {
		t.Errorf("bad label: %v", err)
	}
}

func pngBytes(t testing.TB, img image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImageFolderAndArchive(t *testing.T) {
	dir := t.TempDir()
	files := map[string]image.Image{}
	for i, class := range []string{"cat", "dog", "cat"} {
		img := image.NewRGBA(image.Rect(0, 0, 3, 2))
		img.Set(1, 0, color.RGBA{uint8(10 * i), 20, 30, 255})
		files["train/"+class+"/"+string(rune('a'+i))+".png"] = img
	}
	gray := image.NewGray(image.Rect(0, 0, 3, 2))
	files["test/x.png"] = gray
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	for name, img := range files {
		b := pngBytes(t, img)
		write(t, filepath.Join(dir, "folder", name), b)
		tw.WriteHeader(&tar.Header{Name: "./" + name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
	}
	tw.Close()
	arch := write(t, filepath.Join(dir, "set.tgz"), gz(tarBuf.Bytes()))
	for _, spec := range []string{"images:" + filepath.Join(dir, "folder") + "#train", "images:" + arch + "#train"} {
		d, err := Open(spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d.N != 3 || d.C != 3 || d.H != 2 || d.W != 3 || len(d.Classes) != 2 || d.Labels[1] != 0 || d.Labels[2] != 1 {
			t.Fatalf("%s: %d images %d×%d×%d, classes %v labels %v", spec, d.N, d.C, d.H, d.W, d.Classes, d.Labels)
		}
		if px := d.Pixels(1); px[1] != 20 || px[6+1] != 20 || px[12+1] != 30 { // b.png (i = 2): R 20
			t.Fatalf("%s: pixels %v", spec, px)
		}
	}
	d, err := Open("images:"+filepath.Join(dir, "folder")+"#test", Options{})
	if err != nil || d.C != 1 || d.Labels != nil {
		t.Fatalf("gray test folder: %v, %+v", err, d)
	}
	write(t, filepath.Join(dir, "folder", "train", "dog", "broken.png"), []byte("not a png"))
	if _, err := Open("images:"+filepath.Join(dir, "folder")+"#train", Options{}); err == nil || !strings.Contains(err.Error(), "broken.png") {
		t.Errorf("broken PNG: %v", err)
	}
	write(t, arch, gz(tarBuf.Bytes())[:100])
	if _, err := Open("images:"+arch, Options{}); err == nil || !strings.Contains(err.Error(), arch) {
		t.Errorf("truncated archive: %v", err)
	}
}

func TestSampleScalingFlipDequantize(t *testing.T) {
	d := &Dataset{N: 1, C: 1, H: 1, W: 3, Pix: []uint8{0, 255, 51}}
	x := make([]float32, 3)
	d.Scale(x, d.Pix, false, nil)
	if x[0] != -1 || x[1] != 1 || !(math.Abs(float64(x[2])+0.6) <= 1e-6) {
		t.Fatalf("scaled %v", x)
	}
	d.Scale(x, d.Pix, true, nil)
	if x[2] != -1 || !(x[0] <= -0.59) {
		t.Fatalf("flipped %v", x)
	}
	d.Dequantize, d.Flip = true, true
	r := rng.New(1)
	flips := 0
	for range 2000 {
		d.Sample(r, x)
		if x[0] > -0.9 { // 51 or 255 in front: flipped
			flips++
		}
		lo0 := float32(2*0/256.0 - 1)
		if x[0] < lo0 || x[1] > 1 || x[2] < -1 {
			t.Fatalf("dequantised value out of range: %v", x)
		}
	}
	if flips < 900 || flips > 1100 {
		t.Fatalf("%d flips in 2000 draws", flips)
	}
}

func TestGridPNG(t *testing.T) {
	x := []float32{-1, 1, 0, 0.5, 1, -1, 0, 0}
	p := filepath.Join(t.TempDir(), "g.png")
	if err := WriteGrid(p, x, 2, 1, 2, 2, 2, 3); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(p)
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 2+2*(6+2) || b.Dy() != 2+6+2 {
		t.Fatalf("grid size %v", b)
	}
	if r, _, _, _ := img.At(2, 2).RGBA(); r != 0 {
		t.Fatalf("top-left pixel %d, want black", r)
	}
	if r, _, _, _ := img.At(2+3, 2).RGBA(); r>>8 != 255 {
		t.Fatalf("second pixel %d, want white", r>>8)
	}
}

// TestFashionMNIST reads the Debian copy when it is installed
// (apt-get install dataset-fashion-mnist); datasets.md gives the checks.
func TestFashionMNIST(t *testing.T) {
	const dir = "/usr/share/datasets/fashion-mnist"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("Fashion-MNIST not installed")
	}
	d, err := Open("fashion-mnist:"+dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 60000 || d.H != 28 || d.W != 28 || d.C != 1 {
		t.Fatalf("%d images %d×%d×%d", d.N, d.C, d.H, d.W)
	}
	want := []int{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}
	for i, l := range want {
		if d.Labels[i] != l {
			t.Fatalf("labels %v, want %v", d.Labels[:10], want)
		}
	}
	var sum float64
	for _, v := range d.Pix {
		sum += float64(v)
	}
	if mean := sum / float64(len(d.Pix)) / 255; !(math.Abs(mean-0.2860) <= 5e-4) {
		t.Fatalf("mean %.4f, want 0.2860", mean)
	}
}

// TestIDXShapeChecks: the files of issue 17 are refused with the cap or the
// zero dimension named, not accepted as an empty data set.
func TestIDXShapeChecks(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"overflow", idxOverflow, "the cap of 8 GiB"},
		{"zero", idxBytes([]int{0, 28, 28}, nil), "zero dimension"},
		{"zero-side", idxBytes([]int{5, 0, 28}, nil), "zero dimension"},
		{"max-u32", idxBytes([]int{1 << 20, 1 << 20, 1 << 20}, nil), "the cap of 8 GiB"},
	} {
		_, err := ReadIDXImages(write(t, filepath.Join(dir, tc.name), tc.b))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
	if len(idxOverflow) != 16 {
		t.Fatalf("the overflow case is %d bytes, want the issue's 16", len(idxOverflow))
	}
}

// TestImageHeaderChecked: a PNG declaring a side past MaxSide is refused
// from its header, before its pixels are allocated.
func TestImageHeaderChecked(t *testing.T) {
	p := pngBytes(t, image.NewGray(image.Rect(0, 0, 3, 2)))
	big := pngWithSize(p, MaxSide+1, 2)
	_, err := decodeImages("dir", []imageFile{{"a.png", big}})
	if err == nil || !strings.Contains(err.Error(), "sides must be 1 to 16384") {
		t.Fatalf("error %v", err)
	}
	if _, err := decodeImages("dir", []imageFile{{"a.png", p}}); err != nil {
		t.Fatal(err)
	}
}

// pngWithSize returns the PNG p with the width and height of its IHDR chunk
// replaced (and the chunk's CRC recomputed).
func pngWithSize(p []byte, w, h uint32) []byte {
	out := append([]byte{}, p...)
	binary.BigEndian.PutUint32(out[16:], w)
	binary.BigEndian.PutUint32(out[20:], h)
	binary.BigEndian.PutUint32(out[29:], crc32.ChecksumIEEE(out[12:29]))
	return out
}
