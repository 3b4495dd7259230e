package serve

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// FuzzDecodeUpload: holdctl serve's upload reader never panics on any bytes, and what it accepts is
// exactly one image of the model's shape (c planes of h×w levels); a PNG of the wrong size is refused
// before its pixels are decoded.
func FuzzDecodeUpload(f *testing.F) {
	for _, c := range []int{1, 3} {
		var img image.Image
		if c == 1 {
			g := image.NewGray(image.Rect(0, 0, 4, 4))
			for i := range g.Pix {
				g.Pix[i] = uint8(17 * i)
			}
			img = g
		} else {
			rgba := image.NewRGBA(image.Rect(0, 0, 4, 4))
			for i := range rgba.Pix {
				rgba.Pix[i] = uint8(29*i) | 0x03
			}
			for i := 3; i < len(rgba.Pix); i += 4 {
				rgba.Pix[i] = 0xff
			}
			img = rgba
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes(), uint8(c))
	}
	f.Add([]byte{}, uint8(1))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\xff\xff\x00\x00\xff\xff\x08\x00\x00\x00\x00"), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, ch uint8) {
		c := 1
		if ch%2 == 1 {
			c = 3
		}
		levels, err := decodeUpload(b, c, 4, 4)
		if err == nil && len(levels) != c*16 {
			t.Fatalf("accepted %d levels for a %d×4×4 model", len(levels), c)
		}
		if err == nil {
			cfg, _ := png.DecodeConfig(bytes.NewReader(b))
			if cfg.Width != 4 || cfg.Height != 4 {
				t.Fatalf("accepted a %d×%d PNG for a 4×4 model", cfg.Width, cfg.Height)
			}
			if c == 3 && (cfg.ColorModel == color.GrayModel || cfg.ColorModel == color.Gray16Model) {
				t.Fatal("accepted a gray PNG for an RGB model")
			}
		}
	})
}
