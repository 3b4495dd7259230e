//go:build unix

package main

// Issue 48, item 8: round 4 of the adversarial CLI suite, on what issues 28 and 17 did not try —
// hostile checkpoints, image folders, archives, .npy files and logs against every reader; integers
// that Go would read as octal or hex; stray arguments and missing required flags; sampler sizes
// that allocate before the first step; outputs onto exports, runs and data sets; a run directory
// trained in by another process; signals at chosen moments. Every child runs under the 3 GiB
// address-space cap of cli_adversarial_test.go (ulimit -v; normal runs fit under it) with a timeout,
// and TMPDIR inside the watched tree, so that a panic's trace file counts as a file created.
//
// Each table case states its exit status (2 bad input, 1 a failure at run time; never 3, a hang or
// Go's fatal out-of-memory), a one-line message starting "holdctl" that names the bad value, and
// that nothing under the watched roots is created, changed or removed (no temporary left).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// round4Cap runs holdctl under the 3 GiB address-space cap in dir with TMPDIR=tmp, killed after
// timeout (a default output such as restore's restored.npy then lands where the snapshot sees it).
func round4Cap(t *testing.T, dir, tmp string, timeout time.Duration, args ...string) result {
	t.Helper()
	return round4CapBin(t, holdctlBin, dir, tmp, timeout, args...)
}

// round4CapBin is round4Cap of the binary bin (holdctl-shim, say).
func round4CapBin(t *testing.T, bin, dir, tmp string, timeout time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sh := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, addressCapKiB)
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", sh, bin}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.code, r.stderr = -1, "timed out (hung?)\n"+r.stderr
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("holdctl %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// round4Fixtures are the files the table aims at, all under W.
type round4Fixtures struct {
	W, Tmp          string
	Run1D, ImgRun   string // a 1-D HOLD run and a 3-step ncsnpp-tiny run on 8×8 IDX images
	Export, Classif string // the image run's export and a classifier of 8×8 images
	IDX             string // mnist:DIR of 8×8 images (train 12, t10k 20)
	Samples         string // 100 1-D samples (.npy)
}

func (fx round4Fixtures) f(name string) string { return filepath.Join(fx.W, name) }

// gray8PNG is an 8-bit gray PNG of w×h pixels.
func gray8PNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeaderOnly is a PNG whose IHDR declares w×h pixels and whose data is a few hundred bytes.
func pngHeaderOnly(t *testing.T, w, h uint32) []byte {
	b := gray8PNG(t, 2, 2)
	binary.BigEndian.PutUint32(b[16:], w) // IHDR's width and height follow the 8-byte signature and chunk head
	binary.BigEndian.PutUint32(b[20:], h)
	crc := crc32IEEE(b[12:29])
	binary.BigEndian.PutUint32(b[29:], crc)
	return b
}

func crc32IEEE(p []byte) uint32 {
	crc := ^uint32(0)
	for _, v := range p {
		crc ^= uint32(v)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xedb88320
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

// tgzOf is a gzip'd tar of the entries (name → content; a content starting "->" is a symbolic link
// to the rest, "|" a FIFO).
func tgzOf(t *testing.T, entries [][2]string) []byte {
	t.Helper()
	var tarBuf bytes.Buffer
	for _, e := range entries {
		hdr := make([]byte, 512)
		copy(hdr, e[0])
		copy(hdr[100:], "0000644\x00")
		copy(hdr[108:], "0000000\x00")
		copy(hdr[116:], "0000000\x00")
		size, typ, body := len(e[1]), byte('0'), e[1]
		switch {
		case strings.HasPrefix(e[1], "->"):
			size, typ, body = 0, '2', ""
			copy(hdr[157:], e[1][2:])
		case e[1] == "|":
			size, typ, body = 0, '6', ""
		}
		copy(hdr[124:], fmt.Sprintf("%011o\x00", size))
		copy(hdr[136:], "00000000000\x00")
		hdr[156] = typ
		copy(hdr[257:], "ustar\x0000")
		copy(hdr[148:], "        ")
		var sum int
		for _, c := range hdr {
			sum += int(c)
		}
		copy(hdr[148:], fmt.Sprintf("%06o\x00 ", sum))
		tarBuf.Write(hdr)
		tarBuf.WriteString(body)
		if pad := (512 - len(body)%512) % 512; pad > 0 {
			tarBuf.Write(make([]byte, pad))
		}
	}
	tarBuf.Write(make([]byte, 1024))
	return gzipBytes(t, tarBuf.Bytes())
}

// gzipBytes is b gzip-compressed.
func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// safetensorsOf is a safetensors file of the header JSON and payload.
func safetensorsOf(header string, payload []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), payload...)
}

func round4Setup(t *testing.T) round4Fixtures {
	t.Helper()
	hold1D, _, _ := trainedRuns(t)
	w := t.TempDir()
	fx := round4Fixtures{W: w, Tmp: filepath.Join(w, "tmp"), Run1D: filepath.Join(w, "run1d"), ImgRun: filepath.Join(w, "imgrun"),
		Export: filepath.Join(w, "export"), IDX: filepath.Join(w, "idx"), Samples: filepath.Join(w, "samples.npy")}
	for _, d := range []string{fx.Tmp, fx.IDX} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(fx.Run1D, os.DirFS(hold1D)); err != nil {
		t.Fatal(err)
	}
	writeLabelledIDX(t, fx.IDX, "train", 12, 1)
	writeLabelledIDX(t, fx.IDX, "t10k", 20, 2)
	mustRun(t, "train", "--data", "mnist:"+fx.IDX, "--model", "ncsnpp-tiny", "--steps", "2", "--batch", "2", "--out", fx.ImgRun, "--threads", "1")
	mustRun(t, "export", "--ckpt", fx.ImgRun, "--out", fx.Export)
	fx.Classif = tinyClassifier(t, w)
	mustRun(t, "sample", "--oracle", "--n", "100", "--nfe", "4", "--out", fx.Samples)
	return fx
}

func TestRound4AdversarialTable(t *testing.T) {
	fx := round4Setup(t)
	f := fx.f
	w := fx.W
	mkdir := func(names ...string) {
		for _, n := range names {
			if err := os.MkdirAll(f(n), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	put := func(name string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(f(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ckpt, err := os.ReadFile(filepath.Join(fx.Run1D, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	// Hostile checkpoints: each a run directory of one ckpt.safetensors.
	hostileCkpts := map[string][]byte{
		"ck-truncated": ckpt[:len(ckpt)/3],
		"ck-garbage":   bytes.Repeat([]byte{0xa5, 0x17, 0xff, 0x3c}, 1024),
		"ck-hugehdr":   binary.LittleEndian.AppendUint64(nil, 1<<60),
		"ck-empty":     {},
		"ck-shape":     safetensorsOf(`{"w":{"dtype":"F32","shape":[1073741824,1073741824],"data_offsets":[0,16]}}`, make([]byte, 16)),
		"ck-offsets":   safetensorsOf(`{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,1099511627776]}}`, make([]byte, 16)),
		"ck-dtype":     safetensorsOf(`{"w":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, make([]byte, 16)),
		"ck-notjson":   safetensorsOf(`{"w":`, nil),
	}
	for d, b := range hostileCkpts {
		put(filepath.Join(d, ckptName), b) // no .lock: a refused --resume must not leave one it made
	}
	mkdir("ck-dir/" + ckptName)
	if err := os.Symlink("/dev/zero", f("ck-devzero")); err != nil {
		t.Fatal(err)
	}
	// Image folders and archives.
	ok := gray8PNG(t, 8, 8)
	put("im-truncated/a.png", ok[:40])
	put("im-truncated/b.png", ok)
	put("im-mixed/a.png", ok)
	put("im-mixed/b.png", gray8PNG(t, 16, 8))
	put("im-huge/a.png", pngHeaderOnly(t, 1<<30, 1<<30))
	put("im-text/a.png", []byte("a text file named .png\n"))
	mkdir("im-empty", "im-subdir/a.png")
	if err := os.Symlink("/dev/zero", f("im-devzero.png")); err != nil {
		t.Fatal(err)
	}
	mkdir("im-link")
	if err := os.Symlink("/dev/zero", filepath.Join(f("im-link"), "a.png")); err != nil {
		t.Fatal(err)
	}
	put("tg-ok.tgz", tgzOf(t, [][2]string{{"a.png", string(ok)}, {"b.png", string(ok)}, {"c.png", string(ok)}}))
	put("tg-truncated.tgz", tgzOf(t, [][2]string{{"a.png", string(ok)}})[:60])
	put("tg-garbage.tgz", bytes.Repeat([]byte("not gzip "), 50))
	put("tg-symlink.tgz", tgzOf(t, [][2]string{{"a.png", "->/etc/passwd"}}))
	put("tg-fifo.tgz", tgzOf(t, [][2]string{{"a.png", "|"}}))
	put("tg-empty.tgz", tgzOf(t, nil))
	put("tg-huge.tgz", tgzOf(t, [][2]string{{"a.png", string(pngHeaderOnly(t, 1<<30, 1<<30))}}))
	put("tg-text.tgz", tgzOf(t, [][2]string{{"a.png", "hello"}}))
	put("tg-plain.tgz", gzipBytes(t, []byte("a gzip of plain text, not a tar\n")))
	// IDX directories.
	mkdir("idx-trunc", "idx-magic", "idx-labels")
	for _, d := range []string{"idx-trunc", "idx-magic", "idx-labels"} {
		writeLabelledIDX(t, f(d), "train", 12, 1)
		writeLabelledIDX(t, f(d), "t10k", 12, 2)
	}
	{
		b, _ := os.ReadFile(filepath.Join(f("idx-trunc"), "train-images-idx3-ubyte"))
		put("idx-trunc/train-images-idx3-ubyte", b[:len(b)/2])
		b[2], b[3] = 0x0d, 0x03 // float elements
		put("idx-magic/train-images-idx3-ubyte", b)
		put("idx-labels/train-labels-idx1-ubyte", append(idxHeader(5), 0, 1, 2, 0, 1)) // 5 labels for 12 images
	}
	// .npy files of images and points.
	dim := 64
	img := make([]float64, 2*dim)
	put("np-images.npy", npyBytes([]int{2, dim}, img))
	put("np-truncated.npy", npyBytes([]int{2, dim}, img)[:200])
	put("np-hdrlen.npy", append([]byte("\x93NUMPY\x01\x00\xff\xff"), "{'descr': '<f8'"...))
	put("np-v3.npy", append([]byte("\x93NUMPY\x03\x00\x10\x00\x00\x00"), "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 64), }"...))
	npyHeader := func(h string) []byte {
		for (10+len(h)+1)%64 != 0 {
			h += " "
		}
		b := binary.LittleEndian.AppendUint16([]byte("\x93NUMPY\x01\x00"), uint16(len(h)+1))
		return append(append(b, h...), '\n')
	}
	put("np-f16.npy", append(npyHeader("{'descr': '<f16', 'fortran_order': False, 'shape': (2, 64), }"), make([]byte, 2*64*16)...))
	put("np-object.npy", append(npyHeader("{'descr': '|O', 'fortran_order': False, 'shape': (2, 64), }"), make([]byte, 2*64*8)...))
	put("np-negshape.npy", npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (-2, 64), }"))
	put("np-wraps.npy", npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }"))
	put("np-3d.npy", npyBytes([]int{2, 8, 8}, img))
	put("np-out-of-range.npy", npyBytes([]int{2, dim}, append([]float64{5}, img[1:]...)))
	// Logs for plot loss and CSVs for plot nfe.
	put("lg-negative/log.csv", []byte("step,loss\n1,-1\n2,0\n"))
	put("lg-garbage/log.csv", bytes.Repeat([]byte{0xff, 0xfe, 0x00, 0x41}, 4096))
	put("lg-newline/log.csv", []byte("\"a\nb\",c\n1,2\n"))
	put("lg-header/log.csv", []byte("step,loss,lr,grad_norm,seconds\n"))
	put("lg-longline/log.csv", []byte("step,loss\n1,"+strings.Repeat("9", 1<<20)+"\n"))
	put("lg-quote/log.csv", []byte("step,loss\n1,\"0.5\n"))
	mkdir("lg-dir/log.csv")
	mkdir("lg-devzero")
	if err := os.Symlink("/dev/zero", filepath.Join(f("lg-devzero"), logName)); err != nil {
		t.Fatal(err)
	}
	put("nfe-newline.csv", []byte("\"sampler\ngrid\",nfe,w1\nx,10,0.1\n"))
	put("nfe-nocols.csv", []byte("a,b,c\n1,2,3\n"))
	put("nfe-negative.csv", []byte("sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\na,quadratic,10,9,0,-0.5,0,1,1\n"))
	put("nfe-inf.csv", []byte("sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\na,quadratic,10,9,0,+Inf,0,1,1\na,quadratic,20,19,0,1e400,0,1,1\n"))
	put("notes.txt", []byte("keep me\n"))
	// Runs without a lock file (copied, or a lock removed) for refused resumes: one whose config.yaml
	// contradicts its checkpoint, others to give contradicting or bad flags, or no --resume.
	for _, d := range []string{"rs-config", "rs-flags", "rs-badflag", "rs-noresume"} { // one each: a lock left by one case must not hide the next's
		if err := os.CopyFS(f(d), os.DirFS(fx.Run1D)); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(f(d), ".lock"))
	}
	{
		yml, err := os.ReadFile(filepath.Join(f("rs-config"), configName))
		if err != nil {
			t.Fatal(err)
		}
		put(filepath.Join("rs-config", configName), []byte(strings.Replace(string(yml), "seed: ", "seed: 9", 1)))
	}
	if err := os.Symlink(fx.Run1D, f("run-link")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "fid", "--ref", "mnist:"+fx.IDX, "--samples", "mnist:"+fx.IDX, "--features", fx.Classif, "--kid-only", "--save-stats", f("ref-stats.npz"))
	put("np-negdim2.npy", npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (2, -64), }"))
	put("np-bigdim.npy", npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999, 2), }"))
	put("np-fracdim.npy", npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (2.5, 64), }"))
	put("nfe-negnfe.csv", []byte("sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\na,quadratic,-10,9,0,0.5,0,1,1\n"))
	put("nfe-zero-floor.csv", []byte("sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\nfloor-mean,exact,0,0,0,-0.003,0,1,0\na,quadratic,10,9,0,0.5,0,1,1\n"))

	D := "mnist:" + fx.IDX
	E, R, I := fx.Export, fx.Run1D, fx.ImgRun
	smp := func(extra ...string) []string {
		return append([]string{"sample", "--ckpt", R, "--n", "10", "--nfe", "10", "--threads", "1", "--out", f("s.npy")}, extra...)
	}
	orc := func(data string, extra ...string) []string {
		return append([]string{"sample", "--oracle", "--data", data, "--oracle-n", "2", "--n", "2", "--nfe", "4", "--out", f("s.npy")}, extra...)
	}
	model, _ := filepath.Abs(restoreModel)
	images, _ := filepath.Abs(strings.TrimPrefix(restoreImages, "idx:"))
	rst := func(extra ...string) []string { // restore with the shipped model: every case refused before it restores
		return append([]string{"restore", "--ckpt", model, "--in", "idx:" + images, "--task", "inpaint-box", "--n", "1", "--nfe", "2", "--threads", "1"}, extra...)
	}
	traj := func(extra ...string) []string {
		return append([]string{"plot", "trajectory", "--ckpt", E, "--data", D, "--n", "1", "--times", "2", "--nfe", "4", "--out", f("t.png")}, extra...)
	}
	fidc := func(extra ...string) []string {
		return append([]string{"fid", "--ref", D, "--samples", D, "--features", fx.Classif, "--kid-only"}, extra...)
	}
	clf := func(extra ...string) []string {
		return append([]string{"classifier", "train", "--data", D, "--epochs", "1", "--out", f("c.safetensors")}, extra...)
	}
	bsmp := func(extra ...string) []string {
		return append([]string{"bench", "sample", "--ckpt", E, "--batch", "1", "--repeats", "1", "--nfe", "4"}, extra...)
	}
	x0 := func(extra ...string) []string {
		return append([]string{"model", "x0", "--ckpt", E, "--data", D, "--n", "1", "--levels", "2"}, extra...)
	}
	type tcase struct {
		name string
		code int
		want string
		args []string
	}
	var cases []tcase
	add := func(name string, code int, want string, args ...string) {
		cases = append(cases, tcase{name, code, want, args})
	}

	// 1. Hostile checkpoints against every command that loads one.
	for _, c := range []struct{ dir, want string }{
		{"ck-truncated", "truncated"}, {"ck-garbage", "header length"}, {"ck-hugehdr", "header length"},
		{"ck-empty", "too short"}, {"ck-shape", ""}, {"ck-offsets", ""}, {"ck-dtype", "F128"}, {"ck-notjson", ""},
		{"ck-dir", "directory"}, {"ck-devzero", "device"},
	} {
		add("sample --ckpt "+c.dir, 2, c.want, "sample", "--ckpt", f(c.dir), "--n", "2", "--nfe", "2", "--out", f("s.npy"))
	}
	for _, c := range []struct{ dir, want string }{{"ck-truncated", "truncated"}, {"ck-shape", ""}, {"ck-devzero", "device"}} {
		add("export --ckpt "+c.dir, 2, c.want, "export", "--ckpt", f(c.dir), "--out", f("exp-new"))
		add("nll --ckpt "+c.dir, 2, c.want, "nll", "--ckpt", f(c.dir), "--n", "2")
		add("model x0 --ckpt "+c.dir, 2, c.want, x0("--ckpt", f(c.dir))...)
		add("plot trajectory --ckpt "+c.dir, 2, c.want, traj("--ckpt", f(c.dir))...)
		add("bench sample --ckpt "+c.dir, 2, c.want, bsmp("--ckpt", f(c.dir))...)
		add("restore --ckpt "+c.dir, 2, c.want, rst("--ckpt", f(c.dir))...)
		add("eval --ckpt "+c.dir, 2, c.want, "eval", "--ckpt", f(c.dir), fx.Samples)
		feat := filepath.Join(f(c.dir), ckptName)
		if c.dir == "ck-devzero" {
			feat = f(c.dir)
		}
		add("fid --features "+c.dir, 2, c.want, fidc("--features", feat)...)
		add("train --resume "+c.dir, 2, c.dir, "train", "--resume", "--out", f(c.dir), "--threads", "1")
	}

	// 2. Hostile image folders and archives against every reader of images.
	imgs := []struct{ spec, want string }{
		{"im-truncated", "a.png"}, {"im-mixed", "one size"}, {"im-huge", "a.png"}, {"im-text", "a.png"}, {"im-empty", "no PNG"},
		{"im-link", "a.png"}, {"tg-truncated.tgz", "tg-truncated.tgz"}, {"tg-garbage.tgz", "not a gzip"}, {"tg-symlink.tgz", "no PNG"},
		{"tg-fifo.tgz", "no PNG"}, {"tg-empty.tgz", "no PNG"}, {"tg-huge.tgz", "a.png"}, {"tg-text.tgz", "a.png"}, {"tg-plain.tgz", "tg-plain.tgz"},
	}
	for _, c := range imgs {
		add("oracle --data images:"+c.spec, 2, c.want, orc("images:"+f(c.spec))...)
	}
	for _, c := range imgs[:6] {
		add("train --data images:"+c.spec, 2, c.want, "train", "--data", "images:"+f(c.spec), "--model", "ncsnpp-tiny", "--steps", "1", "--batch", "2", "--out", f("new-run"))
		add("fid --ref images:"+c.spec, 2, c.want, fidc("--ref", "images:"+f(c.spec))...)
		add("restore --in images:"+c.spec, 2, c.want, rst("--in", "images:"+f(c.spec))...)
	}
	add("oracle --data images: a PNG that is /dev/zero", 2, "", orc("images:"+f("im-devzero.png"))...)
	add("oracle --data images: a folder holding a folder named .png", 2, "", orc("images:"+f("im-subdir"))...)
	for _, c := range []struct{ dir, want string }{{"idx-trunc", "train-images"}, {"idx-magic", ""}, {"idx-labels", ""}} {
		add("classifier --data "+c.dir, 2, c.want, clf("--data", "mnist:"+f(c.dir))...)
		add("train --data mnist:"+c.dir, 2, c.want, "train", "--data", "mnist:"+f(c.dir), "--model", "ncsnpp-tiny", "--steps", "1", "--batch", "2", "--out", f("new-run"))
		add("fid --ref mnist:"+c.dir, 2, c.want, fidc("--ref", "mnist:"+f(c.dir))...)
	}

	// 3. Hostile .npy images and points.
	for _, c := range []struct{ file, want string }{
		{"np-truncated.npy", "np-truncated.npy"}, {"np-hdrlen.npy", "np-hdrlen.npy"}, {"np-v3.npy", "np-v3.npy"}, {"np-f16.npy", "np-f16.npy"},
		{"np-object.npy", "np-object.npy"}, {"np-negshape.npy", "np-negshape.npy"}, {"np-wraps.npy", "np-wraps.npy"},
	} {
		add("fid --samples "+c.file, 2, c.want, fidc("--samples", f(c.file))...)
		add("eval "+c.file, 2, c.want, "eval", f(c.file))
		add("train --data "+c.file, 2, c.want, "train", "--data", f(c.file), "--steps", "1", "--out", f("new-run"))
	}
	for _, c := range []struct{ file, want string }{ // the file and the offending value, not only the file
		{"np-negshape.npy", "negative dimension -2 in shape"}, {"np-negdim2.npy", "negative dimension -64 in shape"},
		{"np-bigdim.npy", "dimension 99999999999999999999999 in shape is beyond"}, {"np-fracdim.npy", `bad dimension "2.5"`},
		{"np-wraps.npy", "shape [4294967296 4294967296 16]"},
	} {
		add("eval names the value of "+c.file, 2, c.want, "eval", f(c.file))
		add("fid --samples names the value of "+c.file, 2, c.want, fidc("--samples", f(c.file))...)
	}
	add("restore --in a 3-D .npy", 2, "np-3d.npy", rst("--in", f("np-3d.npy"))...)
	add("restore --in images of another size", 2, "np-images.npy", rst("--in", f("np-images.npy"))...)
	add("restore --in /dev/zero", 2, "", rst("--in", "/dev/zero")...)
	add("restore --in a directory named .npy", 2, "", rst("--in", f("ck-dir"))...)

	// 4. Logs and CSVs.
	for _, c := range []struct{ dir, want string }{
		{"lg-negative", "y = -1"}, {"lg-garbage", "no step and loss columns"}, {"lg-newline", `"a\nb,c"`}, {"lg-header", "no logged steps"},
		{"lg-longline", "no logged steps"}, {"lg-quote", "lg-quote"}, {"lg-dir", "directory"}, {"lg-devzero", "device"}, {"missing", "missing"},
	} {
		add("plot loss --run "+c.dir, 2, c.want, "plot", "loss", "--run", "a="+f(c.dir), "--out", f("loss.png"))
	}
	add("plot loss --smooth 0", 2, "--smooth must be in [1, 10000] (1: none), got 0", "plot", "loss", "--run", R, "--smooth", "0", "--out", f("loss.png"))
	add("plot loss --out onto a run's log", 2, "png", "plot", "loss", "--run", R, "--out", filepath.Join(R, logName))
	add("plot loss --out a directory", 2, "directory", "plot", "loss", "--run", R, "--out", f("im-subdir/a.png"))
	for _, c := range []struct{ file, want string }{
		{"nfe-newline.csv", ""}, {"nfe-nocols.csv", ""}, {"nfe-negative.csv", "row 2: w1 -0.5: want a finite value ≥ 0"},
		{"nfe-inf.csv", "row 2: w1 +Inf"}, {"nfe-negnfe.csv", `row 2: nfe "-10"`}, {"nfe-zero-floor.csv", "row 2: w1 -0.003"},
	} {
		add("plot nfe --csv "+c.file, 2, c.want, "plot", "nfe", "--csv", f(c.file), "--out", f("p.png"))
	}
	// plot loss: one line per name and one per run.
	add("plot loss the same NAME twice", 2, `both name a line "a"`, "plot", "loss", "--run", "a="+R, "--run", "a="+I, "--out", f("loss.png"))
	add("plot loss the same DIR twice", 2, "one run directory", "plot", "loss", "--run", "a="+R, "--run", "b="+R, "--out", f("loss.png"))
	add("plot loss the same DIR spelled twice", 2, "one run directory", "plot", "loss", "--run", R, "--run", R+"/", "--out", f("loss.png"))
	add("plot loss a DIR and a link to it", 2, "one run directory", "plot", "loss", "--run", "a="+R, "--run", "b="+f("run-link"), "--out", f("loss.png"))
	add("plot loss two DIRs of one base name", 2, `both name a line "run1d"`, "plot", "loss", "--run", R, "--run", f("copy/run1d"), "--out", f("loss.png"))

	// 5. Integers Go reads as octal, hex, binary or with underscores; empty and overflowing values.
	for _, c := range []struct {
		flag, v string
		args    []string
	}{
		{"n", "010", smp()}, {"n", "0x10", smp()}, {"nfe", "0o12", smp()}, {"seed", "0b11", smp()}, {"n", "1_000", smp()},
		{"n", "-010", smp()}, {"steps", "010", []string{"train", "--out", f("new-run")}}, {"batch", "0x40", []string{"train", "--out", f("new-run")}},
		{"threads", "01", []string{"bench", "gemm", "--m", "8", "--k", "8", "--n", "8"}}, {"m", "0x100", []string{"bench", "gemm"}},
		{"batch", "07", bsmp()}, {"first", "00", rst()}, {"box", "010", rst()}, {"epochs", "01", clf()}, {"n", "0100", fidc()},
		{"levels", "03", x0()}, {"smooth", "010", []string{"plot", "loss", "--run", R, "--out", f("loss.png")}},
		{"order", "03", []string{"sde", "--t", "0.5"}}, {"steps", "010", []string{"demo", "--out", f("demo")}},
		{"samples", "0100", []string{"experiment", "samplers", "--samplers", "hold-lt", "--nfe", "10", "--grids", "uniform"}},
		{"in-channels", "03", []string{"model", "info", "--model", "ncsnpp-small"}},
	} {
		add(fmt.Sprintf("%s --%s %s", c.args[0], c.flag, c.v), 2, "--"+c.flag+" "+c.v, append(c.args, "--"+c.flag, c.v)...)
	}
	add("--n= form octal", 2, "--n 010", smp("--n=010")...)
	add("empty --n", 2, `""`, smp("--n", "")...)
	add("empty --clip", 2, `""`, smp("--clip", "")...)
	add("--n beyond int64", 2, "99999999999999999999", smp("--n", "99999999999999999999")...)
	add("--seed beyond uint64", 2, "18446744073709551616", smp("--seed", "18446744073709551616")...)
	add("--seed negative", 2, "-1", smp("--seed", "-1")...)
	add("--seed float", 2, "1e3", smp("--seed", "1e3")...)

	// 6. Floats: NaN, ±Inf, negative, zero and huge where no earlier table tried them.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sde", "--t", "0.5", "--m-inv", "NaN"}, "--m-inv must be finite, got NaN"},
		{[]string{"sde", "--t", "0.5", "--friction", "Inf"}, "--friction must be finite, got +Inf"},
		{[]string{"sde", "--t", "0.5", "--beta-min", "-Inf"}, "--beta-min must be finite, got -Inf"},
		{[]string{"sde", "--t", "0.5", "--sigma-max", "NaN"}, "--sigma-max must be finite, got NaN"},
		{[]string{"sde", "--t", "0.5", "--horizon", "0"}, "got 0"},
		{[]string{"sde", "--t", "0.5", "--beta", "-1"}, "-1"},
		{[]string{"sde", "--astep", "-0.01"}, ""},
		{rst("--noise", "-Inf"), "--noise"},
		{rst("--task", "deblur-gauss", "--noise", "0.1", "--blur-sigma", "0"), "--blur-sigma"},
		{rst("--method", "dps", "--dps-scale", "Inf"), "--dps-scale"},
		{rst("--task", "sr2", "--method", "pigdm", "--pigdm-var", "-1"), "--pigdm-var"},
		{rst("--eta", "-1e-9"), "--eta"},
		{rst("--clip", "-1"), "--clip"},
		{rst("--sigma-min", "0"), "--sigma-min"},
		{rst("--drop", "Inf", "--task", "inpaint-random"), "--drop"},
		{traj("--clip", "NaN"), "--clip must be finite and ≥ 0 (0: off), got NaN"},
		{traj("--eps", "-1"), "--eps must be positive and finite (below the horizon T), got -1"},
		{traj("--sigma-min", "Inf", "--grid", "edm"), "--sigma-min must be finite and ≥ 0 (0: the default), got +Inf"},
		{fidc("--samples", E, "--clip", "-1"), "--clip must be finite and ≥ 0 (0: off), got -1"},
		{fidc("--samples", E, "--eta", "NaN"), "--eta must be in [0, 1], got NaN"},
		{bsmp("--clip", "NaN"), "--clip must be finite and ≥ 0 (0: off), got NaN"},
		{bsmp("--eps", "Inf"), ""},
		{x0("--sigma-min", "NaN"), "NaN"},
		{[]string{"experiment", "samplers", "--samplers", "hold-ode", "--nfe", "10", "--grids", "uniform", "--samples", "100", "--floor-reps", "1", "--ode-tols", "NaN"}, "--ode-tols NaN"},
		{[]string{"experiment", "samplers", "--samplers", "hold-ode", "--nfe", "10", "--grids", "uniform", "--samples", "100", "--floor-reps", "1", "--ode-tols", "-1e-3"}, "--ode-tols -0.001"},
		{[]string{"experiment", "samplers", "--samplers", "hold-ode", "--nfe", "10", "--grids", "uniform", "--samples", "100", "--floor-reps", "1", "--ode-tols", "0"}, "--ode-tols 0"},
		{[]string{"experiment", "nfe", "--end-time", "hold=Inf"}, "hold=Inf"},
		{[]string{"experiment", "samplers", "--samplers", "hold-lt", "--nfe", "10", "--grids", "uniform", "--end-time", "hold=+Inf"}, "hold=+Inf"},
		{[]string{"bench", "ops", "--tol", "+Inf"}, "--tol must be finite and ≥ 0, got +Inf"},
		{[]string{"demo", "--out", f("demo"), "--lr", "NaN", "--steps", "1"}, "lr must be positive and finite, got NaN"},
		{[]string{"demo", "--out", f("demo"), "--lr", "-1", "--steps", "1"}, "got -1"},
		{[]string{"demo", "--out", f("demo"), "--times", "sometimes", "--steps", "1"}, `"sometimes"`},
		{[]string{"demo", "--out", f("demo"), "--L", "NaN", "--steps", "1"}, "NaN"},
		{[]string{"version", "--max-memory", "1e400"}, "1e400"},
		{[]string{"version", "--max-memory", "0x100MiB"}, "0x100MiB"},
		{[]string{"version", "--max-memory", "-1GiB"}, "-1GiB"},
		{[]string{"bench", "peak", "--duration", "-1ns"}, "--duration"},
		{[]string{"bench", "ops", "--perf", "--min-time", "2m"}, "--min-time"},
	} {
		add(strings.Join(c.args[:2], " ")+" "+strings.Join(c.args[len(c.args)-2:], " "), 2, c.want, c.args...)
	}

	// 7. Sizes that allocate before the first step or the first image.
	for _, c := range []struct {
		args []string
		want string
	}{
		{bsmp("--nfe", "1000000000"), "--nfe"},
		{bsmp("--nfe", "0", "--steps", "1000000000"), "--steps"},
		{traj("--nfe", "1000000000"), "--nfe"},
		{traj("--nfe", "0", "--steps", "1000000000"), "--steps"},
		{fidc("--samples", E, "--nfe", "1000000000"), "--nfe"},
		{fidc("--samples", E, "--steps", "2000000000", "--nfe", "0"), "--steps"},
		{[]string{"bench", "ncsnpp", "--python", ""}, "ncsnpp-cifar10 at batch 4"},
		{[]string{"bench", "ncsnpp", "--python", "", "--models", "ncsnpp-small", "--max-memory", "64MiB"}, "ncsnpp-small at batch 32"},
		{[]string{"bench", "train", "--model", "ncsnpp-celebahq256", "--batch", "1", "--steps", "1"}, "over the memory budget"},
		{[]string{"model", "info", "--model", "ncsnpp-small", "--image-size", "8192", "--batch", "1"}, "budget"},
		{[]string{"model", "info", "--model", "ncsnpp-small", "--in-channels", "65536", "--batch", "64"}, "budget"},
		{rst("--n", "100000000"), ""},
		{rst("--samples-per-image", "65536", "--n", "500", "--out", f("grid.png")), ""},
		{clf("--batch", "1000000000"), "--batch"},
		{[]string{"sample", "--oracle", "--data", "images:" + f("tg-ok.tgz"), "--oracle-n", "1000000000", "--n", "2", "--out", f("s.npy")}, "--oracle-n"},
	} {
		add("size "+strings.Join(c.args[:2], " ")+" "+strings.Join(c.args[len(c.args)-2:], " "), 2, c.want, c.args...)
	}

	// 8. Stray arguments (a misplaced flag after one) and missing required flags.
	for _, args := range [][]string{
		{"export", "--ckpt", I, "--out", f("exp-new"), "extra"},
		{"export", "--ckpt", I, f("exp-new"), "--out", f("exp-new")},
		{"version", "now"},
		{"nll", "--ckpt", E, "--n", "2", "more"},
		{"fid", "--ref", D, "--samples", D, "x"},
		{"classifier", "train", "--data", D, "oops"},
		{"plot", "loss", "--run", R, "--out", f("loss.png"), "extra"},
		{"plot", "flow", "--out", f("p.png"), "extra"},
		{"plot", "trajectory", "--ckpt", E, "--data", D, "--out", f("t.png"), "x"},
		{"model", "info", "--model", "ncsnpp-small", "x"},
		{"model", "x0", "--ckpt", E, "--data", D, "x"},
		{"sde", "--t", "0.5", "x"},
		{"bench", "gemm", "x"},
		{"bench", "sample", "--ckpt", E, "x"},
		{"demo", "--out", f("demo"), "x"},
		{"experiment", "samplers", "x"},
	} {
		add("stray argument to "+strings.Join(args[:2], " "), 2, "takes no arguments", args...)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"export", "--out", f("exp-new")}, "--ckpt"},
		{[]string{"export", "--ckpt", I}, "--out"},
		{[]string{"plot", "loss", "--out", f("loss.png")}, "--run"},
		{[]string{"plot", "trajectory", "--data", D, "--out", f("t.png")}, "--ckpt"},
		{[]string{"model", "x0", "--data", D}, "--ckpt"},
		{[]string{"bench", "sample"}, "--ckpt"},
	} {
		add("missing "+c.flag+" of "+strings.Join(c.args[:2], " "), 2, "needs "+c.flag, c.args...)
	}

	// 9. Contradictions.
	add("restore denoise without noise", 2, "σ_y > 0", rst("--task", "denoise")...)
	add("restore ddnm with another sampler", 2, "ddnm", rst("--method", "ddnm", "--sampler", "a-anc")...)
	add("restore a t-grid", 2, "--grid uniform", rst("--grid", "uniform")...)
	add("restore a points run", 2, "not of images", rst("--ckpt", R)...)
	add("restore an image model too small for SSIM", 2, "11×11", "restore", "--ckpt", E, "--in", D+"#test", "--task", "sr2", "--n", "1", "--nfe", "2")
	add("model x0 of a points run", 2, "not images", x0("--ckpt", R)...)
	add("plot trajectory of a points run", 2, "not images", traj("--ckpt", R)...)
	add("sample --oracle with a run's images", 2, "", orc(D, "--oracle-n", "100000")...)
	add("nll of a points run on images", 2, "", "nll", "--ckpt", R, "--data", D, "--n", "2")
	add("eval an image export against 1-D samples", 2, "1-D", "eval", "--ckpt", E, fx.Samples)
	add("export of a FIFO-free missing run", 2, "", "export", "--ckpt", f("no-such-run"), "--out", f("exp-new"))
	add("fid --save-stats with --kid-only onto the samples", 2, "", fidc("--samples", fx.Samples, "--save-stats", fx.Samples)...)

	// 10. Outputs onto what they may not replace.
	add("export onto its own run", 2, ".lock", "export", "--ckpt", I, "--out", I)
	add("export into a points run", 2, "not an exported model", "export", "--ckpt", I, "--out", R)
	add("export over an export without --force", 2, "--force", "export", "--ckpt", I, "--out", E)
	add("export into the IDX directory", 2, "not an exported model", "export", "--ckpt", I, "--out", fx.IDX)
	add("export into an image folder", 2, "", "export", "--ckpt", I, "--out", f("im-mixed"))
	add("export onto a checkpoint file", 2, "", "export", "--ckpt", I, "--out", filepath.Join(I, ckptName))
	add("export onto /dev/null", 2, "", "export", "--ckpt", I, "--out", "/dev/null")
	add("export with an empty --out", 2, "--out is empty", "export", "--ckpt", I, "--out", "")
	add("restore --out onto its --in", 2, "input", rst("--in", f("np-images.npy"), "--out", f("np-images.npy"))...)
	add("restore --out into the image folder it reads", 2, "", rst("--in", "images:"+f("im-mixed"), "--out", filepath.Join(f("im-mixed"), "r.png"))...)
	add("restore --out onto the export's config", 2, "", rst("--out", filepath.Join(E, configName))...)
	add("classifier --out onto the IDX labels", 2, "input of this command", clf("--out", filepath.Join(fx.IDX, "train-labels-idx1-ubyte"))...)
	add("classifier --out onto the export", 2, "belongs to the run", clf("--out", filepath.Join(E, ckptName), "--force")...)
	add("plot trajectory --out onto the export", 2, "", traj("--out", filepath.Join(E, ckptName))...)
	add("fid --save-stats onto the classifier", 2, "", fidc("--save-stats", fx.Classif, "--force")...)
	add("sample --out onto the export's checkpoint", 2, "", smp("--out", filepath.Join(E, ckptName))...)
	add("sample --out onto /dev/null", 2, "", smp("--out", "/dev/null")...)
	add("demo --out an export", 2, "", "demo", "--steps", "1", "--out", E)

	// 11. Issue 48's remaining items. A refused --resume leaves no lock file it made (the directories
	// above have none; the snapshot sees one left behind).
	add("resume onto a contradicting config.yaml", 2, "config.yaml contradicts the checkpoint", "train", "--resume", "--out", f("rs-config"), "--threads", "1")
	add("resume with a contradicting flag", 2, "the flags contradict the stored run", "train", "--resume", "--out", f("rs-flags"), "--lr", "0.5", "--threads", "1")
	add("resume with a bad flag", 2, "steps must be ≥ 0, got -3", "train", "--resume", "--out", f("rs-badflag"), "--steps", "-3", "--threads", "1")
	add("train --out a run without --resume", 2, "pass --resume", "train", "--out", f("rs-noresume"), "--threads", "1")
	// fid --image-shape is honoured by every kind of side, or refused naming the shapes.
	add("fid --image-shape contradicting a data set", 2, "--image-shape 3,32,32 says 3×32×32, but the images are 1×8×8", fidc("--image-shape", "3,32,32")...)
	add("fid --image-shape contradicting a trained run", 2, "the trained run's images are 1×8×8",
		fidc("--ref", f("ref-stats.npz"), "--samples", E, "--kid-only=false", "--n", "2", "--nfe", "2", "--image-shape", "1,4,16")...)
	add("fid --image-shape with trailing text", 2, `--image-shape "1,8,8junk"`, fidc("--image-shape", "1,8,8junk")...)
	add("fid --image-shape with a sign", 2, `--image-shape "1,+8,8"`, fidc("--image-shape", "1,+8,8")...)
	add("fid --image-shape on two statistics files", 2, "both statistics files", "fid", "--ref", f("ref-stats.npz"), "--samples", f("ref-stats.npz"), "--image-shape", "1,8,8")
	// bench kernels: sizes checked before anything is allocated (the shim's budget: TestRound4ShimBenchKernels).
	add("bench kernels --elements 0", 2, "--elements must be in [1, 1099511627776], got 0", "bench", "kernels", "--elements", "0")
	add("bench kernels --elements 2^40+1", 2, "got 1099511627777", "bench", "kernels", "--elements", "1099511627777")
	add("bench kernels --gemm -3", 2, "--gemm must be in [1, 65536], got -3", "bench", "kernels", "--gemm", "-3")
	add("bench kernels --reps 0", 2, "--reps must be in [1, 1048576], got 0", "bench", "kernels", "--reps", "0")
	// bench ops: --filter matching nothing, and --perf's flags without --perf.
	add("bench ops --perf --filter matching nothing", 2, `no case name contains "no-such-case"`, "bench", "ops", "--perf", "--filter", "no-such-case")
	add("bench ops --filter without --perf", 2, "--filter MatMul applies to --perf only", "bench", "ops", "--filter", "MatMul")
	add("bench ops --min-time without --perf", 2, "--min-time 1s applies to --perf only", "bench", "ops", "--min-time", "1s")
	// export --out under a missing directory: refused like every output, no directory made.
	add("export --out under a missing directory", 2, "its directory "+f("no-parent/a/b")+" does not exist (create it first)",
		"export", "--ckpt", I, "--out", f("no-parent/a/b/c"))
	add("export --out under a file", 2, f("notes.txt")+" is not a directory", "export", "--ckpt", I, "--out", f("notes.txt/exp"))

	if len(cases) < 150 {
		t.Fatalf("%d cases, want at least 150", len(cases))
	}
	t.Logf("%d cases under a %d GiB address-space cap", len(cases), addressCapKiB>>20)
	roots := []string{w, filepath.Dir(fx.Run1D)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := fileStates(t, roots...)
			r := round4Cap(t, fx.W, fx.Tmp, 30*time.Second, tc.args...)
			msg := strings.TrimRight(r.stderr, "\n")
			if i := strings.LastIndex(msg, "\n"); i >= 0 && progressOnly(msg[:i]) {
				msg = msg[i+1:] // progress lines ("features: …", "ref: …") come first where a command ran
			}
			cmdline := strings.Join(tc.args, " ")
			switch {
			case strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "fatal error"):
				t.Errorf("holdctl %s: crashed:\n%.2000s", cmdline, r.stderr)
			case r.code != tc.code:
				t.Errorf("holdctl %s: want exit status %d, got %s", cmdline, tc.code, r)
			case strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "holdctl"):
				t.Errorf("holdctl %s: want one line starting holdctl, got:\n%s", cmdline, r.stderr)
			case !strings.Contains(msg, tc.want):
				t.Errorf("holdctl %s: message lacks %q:\n%s", cmdline, tc.want, msg)
			}
			if testing.Verbose() {
				t.Logf("%s", msg)
			}
			if d := diffSnapshots(before, fileStates(t, roots...)); len(d) > 0 {
				t.Errorf("holdctl %s changed files: %v", cmdline, d)
			}
		})
	}
}

// TestRound4ShimBenchKernels: 'bench kernels' of holdctl-shim (-tags cudashim, whose device memory
// is host memory) sizes its workloads through the memory budget before it allocates anything: the
// defaults (about 2 GiB) and flag-given sizes beyond the budget of the 3 GiB cap (1.5 GiB) exit 2
// naming the flags and their values — they died of Go's fatal out-of-memory (exit 2 too, hence the
// check for a one-line message) — and a size within it runs. Skipped where cgo cannot build the shim.
func TestRound4ShimBenchKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds holdctl-shim (cgo, C++)")
	}
	if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skipf("cgo is off here (%s): holdctl-shim cannot be built", strings.TrimSpace(string(out)))
	}
	w := t.TempDir()
	shim := filepath.Join(w, "holdctl-shim")
	build := exec.Command("go", "build", "-tags", strings.Join(append(slices.Clone(buildTags), "cudashim"), ","), "-o", shim, ".")
	if out, err := build.CombinedOutput(); err != nil {
		if _, lerr := exec.LookPath("g++"); lerr != nil {
			t.Skipf("no C++ compiler for the host shim: %v", lerr)
		}
		t.Fatalf("go build -tags cudashim: %v\n%s", err, out)
	}
	tmp := filepath.Join(w, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{nil, 2, []string{"--elements 16777216 --gemm 4096", "over the memory budget of", "16777216 alone needs", "4096 alone needs"}},
		{[]string{"--gemm", "30000", "--elements", "4096"}, 2, []string{"--gemm 30000", "30000 alone needs"}},
		{[]string{"--elements", "400000000", "--gemm", "64"}, 2, []string{"--elements 400000000", "400000000 alone needs"}},
		{[]string{"--elements", "1048576", "--gemm", "512", "--max-memory", "64MiB"}, 2, []string{"--elements 1048576 --gemm 512", "64 MiB"}},
		{[]string{"--elements", "0"}, 2, []string{"--elements must be in"}},
		{[]string{"--elements", "4096", "--gemm", "64", "--reps", "1"}, 0, []string{"lt_step fused"}},
	} {
		args := append([]string{"bench", "kernels"}, c.args...)
		r := round4CapBin(t, shim, w, tmp, 2*time.Minute, args...)
		msg := strings.TrimRight(r.stderr, "\n")
		if c.code == 0 {
			msg = r.stdout
		}
		switch {
		case strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "bad_alloc"):
			t.Errorf("holdctl-shim %s: crashed:\n%.2000s", strings.Join(args, " "), r.stderr)
		case r.code != c.code:
			t.Errorf("holdctl-shim %s: want exit status %d, got %s", strings.Join(args, " "), c.code, r)
		case c.code != 0 && (strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "holdctl")):
			t.Errorf("holdctl-shim %s: want one line starting holdctl, got:\n%s", strings.Join(args, " "), r.stderr)
		}
		for _, want := range c.want {
			if !strings.Contains(msg, want) {
				t.Errorf("holdctl-shim %s: output lacks %q:\n%s", strings.Join(args, " "), want, msg)
			}
		}
	}
}

// progressOnly reports whether every line of s is a progress line: a lower-case label and a colon.
func progressOnly(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		label, _, ok := strings.Cut(line, ":")
		if !ok || label == "" || label[0] < 'a' || label[0] > 'z' || strings.HasPrefix(label, "holdctl") {
			return false
		}
	}
	return true
}

// startCapped starts holdctl under the address-space cap in dir with TMPDIR=tmp and returns the
// command and a scanner of its stderr.
func startCapped(t *testing.T, dir, tmp string, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	sh := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, addressCapKiB)
	cmd := exec.Command("/bin/sh", append([]string{"-c", sh, holdctlBin}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(stderr)
}

// waitLine reads stderr until a line with prefix and returns it (the test fails after 30 s).
func waitLine(t *testing.T, sc *bufio.Scanner, prefix string) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), prefix) {
				found <- sc.Text()
				return
			}
		}
		close(found)
	}()
	select {
	case line, ok := <-found:
		if !ok {
			t.Fatalf("stderr ended before a line %q", prefix)
		}
		return line
	case <-time.After(30 * time.Second):
		t.Fatalf("no line %q after 30 s", prefix)
		return ""
	}
}

// TestRound4RunDirAndSignals: while a training runs (under the cap) in a directory, every other
// command aimed at it is refused with exit 2 and writes nothing; then signals are delivered at chosen
// moments — a closed stdout under sde's JSON, each stop signal after an image sample's first line,
// SIGTERM to demo after its first step — with the statuses the README gives and no temporary left.
func TestRound4RunDirAndSignals(t *testing.T) {
	fx := round4Setup(t)
	f := fx.f
	live := f("live")
	train, sc := startCapped(t, fx.W, fx.Tmp, "train", "--data", "gmm1d", "--hidden", "16", "--layers", "2", "--batch", "64",
		"--steps", "100000000", "--ckpt-every", "0", "--log-every", "10", "--threads", "1", "--out", live)
	waitLine(t, sc, "step ")
	go func() {
		for sc.Scan() { // keep the pipe drained
		}
	}()
	others := []string{fx.Run1D, fx.ImgRun, fx.Export, fx.IDX, fx.Tmp}
	owner := fmt.Sprintf("pid %d", train.Process.Pid)
	for _, c := range []struct {
		want string
		args []string
	}{
		{owner, []string{"plot", "loss", "--run", live, "--out", filepath.Join(live, "loss.png")}},
		{owner, []string{"sample", "--ckpt", fx.Run1D, "--n", "4", "--nfe", "4", "--out", filepath.Join(live, "s.npy")}},
		{owner, []string{"classifier", "train", "--data", "mnist:" + fx.IDX, "--epochs", "1", "--out", filepath.Join(live, "c.safetensors")}},
		{owner, []string{"export", "--ckpt", fx.ImgRun, "--out", filepath.Join(live, "exp")}},
		{owner, []string{"train", "--data", "gmm1d", "--steps", "5", "--out", live}},
		{owner, []string{"train", "--resume", "--out", live, "--threads", "1"}},
		{owner, []string{"experiment", "samplers", "--samplers", "hold-lt", "--nfe", "10", "--grids", "uniform", "--samples", "100",
			"--floor-reps", "1", "--format", "csv", "--out", filepath.Join(live, "study.csv")}},
		{"", []string{"export", "--ckpt", live, "--out", f("exp-live")}},
		{"", []string{"demo", "--steps", "1", "--out", live}},
	} {
		before := fileStates(t, others...)
		r := round4Cap(t, fx.W, fx.Tmp, 30*time.Second, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("holdctl %s while %s trains: want exit 2 naming %q on one line, got %s", strings.Join(c.args, " "), live, c.want, r)
		}
		if d := diffSnapshots(before, fileStates(t, others...)); len(d) > 0 {
			t.Errorf("holdctl %s changed files: %v", strings.Join(c.args, " "), d)
		}
		ents, _ := os.ReadDir(live)
		for _, e := range ents {
			if n := e.Name(); n != ".lock" && n != configName && n != logName && n != ckptName {
				t.Errorf("holdctl %s left %s in the training's directory", strings.Join(c.args, " "), n)
			}
		}
		if _, err := os.Stat(f("exp-live")); err == nil {
			t.Errorf("holdctl %s exported a run that has no checkpoint yet", strings.Join(c.args, " "))
		}
	}
	if err := train.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := waitExit(t, train); !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("the training after SIGINT: %v, want 130", err)
	}

	// A closed stdout: SIGPIPE's status, nothing written to the closed pipe's stderr twin.
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rd.Close()
	cmd := exec.Command(holdctlBin, "sde", "--t", "0.5", "--json")
	cmd.Stdout = wr
	err = cmd.Run()
	wr.Close()
	if !errors.As(err, &exit) || exit.ExitCode() != 141 {
		t.Errorf("sde --json into a closed pipe: %v, want exit status 141", err)
	}

	// Each stop signal after an image sample's first line (the defaults it chose): no picture, no
	// temporary, 128 + the signal.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		out := f(fmt.Sprintf("sig%d.png", sig))
		cmd, sc := startCapped(t, fx.W, fx.Tmp, "sample", "--ckpt", fx.Export, "--n", "4", "--sampler", "em", "--steps", "1000000",
			"--threads", "1", "--out", out, "--out", f(fmt.Sprintf("sig%d.npy", sig)))
		_ = sc
		time.Sleep(300 * time.Millisecond) // past start-up: the model is loaded and sampling
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if err := waitExit(t, cmd); !errors.As(err, &exit) || exit.ExitCode() != 128+int(sig) {
			t.Errorf("sample stopped by %v: %v, want exit status %d", sig, err, 128+int(sig))
		}
		for _, dir := range []string{fx.W, fx.Tmp} {
			if left := temporaries(t, dir); len(left) > 0 {
				t.Errorf("sample stopped by %v left %v", sig, left)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("sample stopped by %v wrote %s", sig, out)
		}
	}

	// SIGTERM to demo once its training loop has started (its first line; a logged step can take
	// longer than the wait on a loaded machine with -tags noasm): the checkpoint first, then 130.
	demo, dsc := startCapped(t, fx.W, fx.Tmp, "demo", "--steps", "100000000", "--out", f("demo"))
	waitLine(t, dsc, "training ")
	go func() {
		for dsc.Scan() {
		}
	}()
	if err := demo.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, demo); !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("demo after SIGTERM: %v, want exit status 130", err)
	}
	if _, err := os.Stat(filepath.Join(f("demo"), "run-1", ckptName)); err != nil {
		t.Errorf("demo after SIGTERM wrote no checkpoint: %v", err)
	}
	if left := temporaries(t, filepath.Join(f("demo"), "run-1")); len(left) > 0 {
		t.Errorf("demo after SIGTERM left %v", left)
	}
}
