package imagedata

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // register the JPEG decoder
	_ "image/png"  // register the PNG decoder
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// imageFile is one file of a folder or archive: its slash path relative to
// the root and its bytes.
type imageFile struct {
	name string
	data []byte
}

func isImageName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".png", ".jpg", ".jpeg":
		return true
	}
	return false
}

// ReadImages reads every PNG/JPEG file under root, a folder or a .tgz /
// .tar.gz archive; with subset, only files under subset/. The class of an
// image is its parent folder (relative to root/subset), when images sit in
// sub-folders. All images must have one size; the data set has 1 channel if
// every image is grayscale, else 3 (RGB).
func ReadImages(root, subset string) (*Dataset, error) {
	var files []imageFile
	var err error
	if strings.HasSuffix(root, ".tgz") || strings.HasSuffix(root, ".tar.gz") {
		files, err = readTarGz(root)
	} else {
		files, err = readFolder(root)
	}
	if err != nil {
		return nil, err
	}
	if subset != "" {
		prefix := strings.Trim(subset, "/") + "/"
		kept := files[:0]
		for _, f := range files {
			if rel, ok := strings.CutPrefix(f.name, prefix); ok {
				kept = append(kept, imageFile{rel, f.data})
			}
		}
		files = kept
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("imagedata: no PNG or JPEG files in %s (subset %q)", root, subset)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	imgs := make([]image.Image, len(files))
	gray := true
	for i, f := range files {
		img, _, err := image.Decode(bytes.NewReader(f.data))
		if err != nil {
			return nil, fmt.Errorf("imagedata: %s: %s: %w", root, f.name, err)
		}
		if i > 0 && img.Bounds().Size() != imgs[0].Bounds().Size() {
			s, s0 := img.Bounds().Size(), imgs[0].Bounds().Size()
			return nil, fmt.Errorf("imagedata: %s: %s is %d×%d, but %s is %d×%d: all images need one size",
				root, f.name, s.X, s.Y, files[0].name, s0.X, s0.Y)
		}
		switch img.ColorModel() {
		case color.GrayModel, color.Gray16Model:
		default:
			gray = false
		}
		imgs[i] = img
	}
	size := imgs[0].Bounds().Size()
	d := &Dataset{N: len(imgs), C: 3, H: size.Y, W: size.X, name: root}
	if gray {
		d.C = 1
	}
	d.Pix = make([]uint8, d.N*d.Dimension())
	for i, img := range imgs {
		toPlanes(d.Pixels(i), img, d.C)
	}
	// Classes from the parent folder of each file.
	var classOf []string
	for _, f := range files {
		classOf = append(classOf, path.Dir(f.name))
	}
	if slices.ContainsFunc(classOf, func(c string) bool { return c != "." }) {
		d.Classes = slices.Compact(slices.Sorted(slices.Values(classOf)))
		d.Labels = make([]int, d.N)
		for i, c := range classOf {
			d.Labels[i], _ = slices.BinarySearch(d.Classes, c)
		}
	}
	return d, nil
}

// toPlanes writes img as C planes of 8-bit levels (gray or R, G, B).
func toPlanes(dst []uint8, img image.Image, c int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	for y := range h {
		for x := range w {
			px := img.At(b.Min.X+x, b.Min.Y+y)
			if c == 1 {
				dst[y*w+x] = color.GrayModel.Convert(px).(color.Gray).Y
				continue
			}
			r, g, bl, _ := px.RGBA()
			dst[y*w+x] = uint8(r >> 8)
			dst[h*w+y*w+x] = uint8(g >> 8)
			dst[2*h*w+y*w+x] = uint8(bl >> 8)
		}
	}
}

func readFolder(root string) ([]imageFile, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("imagedata: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("imagedata: %s is neither a folder nor a .tgz/.tar.gz archive", root)
	}
	var files []imageFile
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() || !isImageName(p) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, imageFile{filepath.ToSlash(rel), b})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("imagedata: %w", err)
	}
	return files, nil
}

func readTarGz(name string) ([]imageFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("imagedata: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("imagedata: %s: not a gzip archive: %w", name, err)
	}
	tr := tar.NewReader(zr)
	var files []imageFile
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("imagedata: %s: truncated or malformed archive: %w", name, err)
		}
		if h.Typeflag != tar.TypeReg || !isImageName(h.Name) {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("imagedata: %s: %s: truncated archive: %w", name, h.Name, err)
		}
		files = append(files, imageFile{strings.TrimPrefix(path.Clean(h.Name), "./"), b})
	}
	return files, nil
}
