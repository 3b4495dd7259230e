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

	"holdgo/internal/budget"
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
	return decodeImages(root, files)
}

// decodeImages decodes the files of root (at least one) into a data set.
// Each header is checked before its image is decoded: sides of at most
// MaxSide, one size for all, at most MaxBytes in all.
func decodeImages(root string, files []imageFile) (*Dataset, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var first image.Config
	gray := true
	for i, f := range files {
		cfg, _, err := image.DecodeConfig(bytes.NewReader(f.data))
		if err != nil {
			return nil, fmt.Errorf("imagedata: %s: %s: %w", root, f.name, err)
		}
		if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxSide || cfg.Height > MaxSide {
			return nil, fmt.Errorf("imagedata: %s: %s is %d×%d: sides must be 1 to %d pixels", root, f.name, cfg.Width, cfg.Height, MaxSide)
		}
		if i == 0 {
			first = cfg
			if _, err := shapeSize([]int{len(files), 3, cfg.Height, cfg.Width}); err != nil {
				return nil, fmt.Errorf("imagedata: %s: %d images of %d×%d: %w", root, len(files), cfg.Width, cfg.Height, err)
			}
		} else if cfg.Width != first.Width || cfg.Height != first.Height {
			return nil, fmt.Errorf("imagedata: %s: %s is %d×%d, but %s is %d×%d: all images need one size",
				root, f.name, cfg.Width, cfg.Height, files[0].name, first.Width, first.Height)
		}
		switch cfg.ColorModel {
		case color.GrayModel, color.Gray16Model:
		default:
			gray = false
		}
	}
	d := &Dataset{N: len(files), C: 3, H: first.Height, W: first.Width, name: root}
	if gray {
		d.C = 1
	}
	// The data set's pixels and one decoded image (at most 8 bytes a pixel) at a time: a folder of
	// large PNGs never holds every decoded image at once.
	tr := budget.New("imagedata " + root)
	if err := tr.Take(int64(d.N)*int64(d.Dimension()), "the pixels"); err != nil {
		return nil, err
	}
	if err := tr.Take(int64(first.Width)*int64(first.Height)*8, "a decoded image"); err != nil {
		return nil, err
	}
	d.Pix = make([]uint8, d.N*d.Dimension())
	for i, f := range files {
		img, _, err := image.Decode(bytes.NewReader(f.data))
		if err != nil {
			return nil, fmt.Errorf("imagedata: %s: %s: %w", root, f.name, err)
		}
		if s := img.Bounds().Size(); s.X != first.Width || s.Y != first.Height {
			return nil, fmt.Errorf("imagedata: %s: %s decodes to %d×%d, its header says %d×%d", root, f.name, s.X, s.Y, first.Width, first.Height)
		}
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
	tr := budget.New("imagedata " + root)
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() || !isImageName(p) {
			return nil
		}
		b, err := budget.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tr.Take(int64(len(b)), p); err != nil {
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
	f, _, err := budget.Open(name)
	if err != nil {
		return nil, fmt.Errorf("imagedata: %w", err)
	}
	defer f.Close()
	return readTarGzFrom(name, f)
}

// readTarGzFrom reads the image files of a gzip-compressed tar stream,
// at most MaxBytes of them in all (a small archive can expand to any size).
func readTarGzFrom(name string, r io.Reader) ([]imageFile, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("imagedata: %s: not a gzip archive: %w", name, err)
	}
	tr := tar.NewReader(zr)
	var files []imageFile
	total := int64(0)
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
		if total += h.Size; h.Size < 0 || total > MaxBytes {
			return nil, fmt.Errorf("imagedata: %s: the image files hold more than %d bytes (the cap of %d GiB)", name, uint64(MaxBytes), MaxBytes>>30)
		}
		if total > budget.Limit()/2 { // the files and their decoded pixels
			return nil, fmt.Errorf("imagedata: %s: the image files hold more than %s, %w (raise --max-memory if it is genuine)", name, budget.Format(budget.Limit()/2), budget.ErrExceeded)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("imagedata: %s: %s: truncated archive: %w", name, h.Name, err)
		}
		files = append(files, imageFile{strings.TrimPrefix(path.Clean(h.Name), "./"), b})
	}
	return files, nil
}
