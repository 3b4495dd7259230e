//go:build unix

package main

// The adversarial table of issue 28: what an adversarial user tries against every command (outputs
// onto inputs, run files, links, FIFOs and files of another kind; small hostile files declaring huge
// sizes; unbounded or non-finite numbers; locks of another host or that are links). Each case runs
// the binary under a 3 GiB address-space cap (ulimit -v) and checks the exit status, a one-line
// message naming the problem, no panic or Go fatal error, and that every file that existed before is
// byte-identical afterwards (and nothing is created).

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"holdgo/data"
	"holdgo/internal/runlock"
)

// addressCapKiB is the address-space cap every adversarial case runs under (3 GiB).
const addressCapKiB = 3 << 20

// holdctlCapped runs the binary under the address-space cap, for at most a minute.
func holdctlCapped(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, addressCapKiB)
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", sh, holdctlBin}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("holdctl %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		r.code, r.stderr = -1, "timed out (hung?)\n"+r.stderr
	}
	return r
}

// fileStates maps every path under the roots to a digest: regular files by content, links by
// target, other files (FIFOs) by mode, never opening them.
func fileStates(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case e.IsDir():
				out[p] = "dir"
			case e.Type()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				out[p] = "link " + target
			case !e.Type().IsRegular():
				out[p] = "special " + e.Type().String()
			default:
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// pthPickle is a state-dict pickle {"w": tensor} whose float32 storage declares numel elements,
// viewed with one dimension of size and stride (as torchfile's hostile tests build it).
func pthPickle(numel uint64, size, stride int32) []byte {
	var b bytes.Buffer
	str := func(s string) {
		b.WriteByte('X')
		binary.Write(&b, binary.LittleEndian, uint32(len(s)))
		b.WriteString(s)
	}
	i4 := func(v int32) { b.WriteByte('J'); binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("\x80\x02}(")
	str("w")
	b.WriteString("ctorch._utils\n_rebuild_tensor_v2\n((")
	str("storage")
	b.WriteString("ctorch\nFloatStorage\n")
	str("0")
	str("cpu")
	b.WriteString("\x8a\x08")
	binary.Write(&b, binary.LittleEndian, numel)
	b.WriteString("NtQ")
	i4(0)
	b.WriteByte('(')
	i4(size)
	b.WriteString("t(")
	i4(stride)
	b.WriteString("t\x89NtRu.")
	return b.Bytes()
}

// legacyPth is a legacy torch.save file around a main pickle, its storage section saying count
// elements and holding n float32 zeros.
func legacyPth(main []byte, count uint64, n int) []byte {
	var b bytes.Buffer
	b.WriteString("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.\x80\x02M\xe9\x03.\x80\x02}.")
	b.Write(main)
	b.WriteString("\x80\x02](X\x01\x00\x00\x000e.")
	binary.Write(&b, binary.LittleEndian, count)
	b.Write(make([]byte, 4*n))
	return b.Bytes()
}

// npzRaw is a .npz whose one entry declares declared bytes and holds the deflated payload.
func npzRaw(t *testing.T, name string, payload []byte, declared uint64) []byte {
	t.Helper()
	var comp bytes.Buffer
	zw := zip.NewWriter(&comp)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(payload)
	zw.Close()
	// Re-read the deflated bytes and write them raw under the declared size.
	zr, err := zip.NewReader(bytes.NewReader(comp.Bytes()), int64(comp.Len()))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := zr.File[0].OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	var deflated bytes.Buffer
	deflated.ReadFrom(raw)
	var out bytes.Buffer
	ow := zip.NewWriter(&out)
	rw, err := ow.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: zr.File[0].CRC32,
		CompressedSize64: uint64(deflated.Len()), UncompressedSize64: declared})
	if err != nil {
		t.Fatal(err)
	}
	rw.Write(deflated.Bytes())
	ow.Close()
	return out.Bytes()
}

// npyBytes is a float64 .npy of shape.
func npyBytes(shape []int, v []float64) []byte {
	var b bytes.Buffer
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	h := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }", tuple)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	binary.Write(&b, binary.LittleEndian, v)
	return b.Bytes()
}

// statsNPZ is pytorch-fid statistics (uncompressed) with the given sigma (d×d).
func statsNPZ(t *testing.T, d int, sigma []float64) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for name, a := range map[string][]byte{"mu.npy": npyBytes([]int{d}, make([]float64, d)), "sigma.npy": npyBytes([]int{d, d}, sigma)} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(a)
	}
	zw.Close()
	return out.Bytes()
}

func TestCLIAdversarialTable(t *testing.T) {
	hold1D, _, hold2D := trainedRuns(t)
	w := t.TempDir()
	f := func(name string) string { return filepath.Join(w, name) }
	ptsRun, pts := pointsRun(t, w)
	runCopy := f("run") // a copy of the 1-D HOLD run that the cases may aim at
	if err := os.CopyFS(runCopy, os.DirFS(hold1D)); err != nil {
		t.Fatal(err)
	}
	run2D := f("run2d")
	if err := os.CopyFS(run2D, os.DirFS(hold2D)); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	otherHost := f("otherhost") // a run whose free lock names another host
	if err := os.CopyFS(otherHost, os.DirFS(hold1D)); err != nil {
		t.Fatal(err)
	}
	linkLock := f("linklock") // a run whose lock file is a symbolic link to a precious file
	if err := os.CopyFS(linkLock, os.DirFS(hold1D)); err != nil {
		t.Fatal(err)
	}
	fifoLock := f("fifolock")
	if err := os.CopyFS(fifoLock, os.DirFS(hold1D)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{otherHost, linkLock, fifoLock} {
		os.Remove(filepath.Join(d, runlock.Name))
	}
	writeFiles(t, w, map[string]string{
		"precious.txt":  "the user's only copy\n",
		"notes.npy":     "a text file named .npy\n",
		"notes.png":     "a text file named .png\n",
		"notes.csv":     "step,loss\n1,0.5\n",
		"study.png":     "sampler,grid,nfe,w1\nhold-lt,uniform,10,0.1\n", // a CSV with a .png name
		"big.yaml":      "steps: 5\nlr: " + strings.Repeat("1", 100) + "\n",
		"report.md":     "# results\n",
		"sigma.csv":     "1,2\n",
		".notes.tmp-12": "a user's dot file that looks like a temporary file\n",
	})
	writeFiles(t, otherHost, map[string]string{runlock.Name: "pid 12345 on host not-" + host + "\n"})
	if err := os.Symlink(f("precious.txt"), filepath.Join(linkLock, runlock.Name)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifoLock, runlock.Name), 0o644); err != nil {
		t.Fatal(err)
	}
	// Files of one kind under another kind's name, links, FIFOs and directories as targets.
	ckptBytes, err := os.ReadFile(filepath.Join(hold1D, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"weights.npy": ckptBytes, "weights.png": ckptBytes, "weights.csv": ckptBytes,
		"weights.npz": ckptBytes, "weights.md": ckptBytes, "weights.safetensors": ckptBytes, "samples.npy": npyBytes([]int{4, 1}, []float64{0.1, 0.2, 0.3, 0.4})} {
		if err := os.WriteFile(f(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"link.npy", "link.png", "link.csv", "link.npz", "link.safetensors", "link.md"} {
		if err := os.Symlink(f("precious.txt"), f(name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"fifo.npy", "fifo.png", "fifo.csv", "fifo.npz", "fifo.safetensors", "fifo.yaml", "fifo.pth", "fifo.md"} {
		if err := syscall.Mkfifo(f(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"dir.npz", "dir.csv", "dir.safetensors", "dir.md", "fifoimgs", "bombimgs"} {
		if err := os.Mkdir(f(name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(f("fifoimgs"), "a.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A PNG of 8192×8192 (a few hundred KB) whose decoded size is over a 256 MiB budget.
	var bomb bytes.Buffer
	if err := png.Encode(&bomb, image.NewGray(image.Rect(0, 0, 8192, 8192))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f("bombimgs"), "a.png"), bomb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// Hostile .pth files (a few hundred bytes each) and statistics.
	sym := []float64{2, 1, 1, 2}
	hostile := map[string][]byte{
		"storage34.pth":  legacyPth(pthPickle(1<<34, 6, 1), 1<<34, 6),
		"frame40.pth":    legacyPth(append(append([]byte("\x80\x04\x95"), binary.LittleEndian.AppendUint64(nil, 1<<40)...), "}."...), 6, 6),
		"unicode40.pth":  legacyPth(append(append([]byte("\x80\x04}(\x8d"), binary.LittleEndian.AppendUint64(nil, 1<<40)...), "w"...), 6, 6),
		"stride0.pth":    legacyPth(pthPickle(1, 1<<30, 0), 1, 1),
		"truncated.pth":  legacyPth(pthPickle(6, 6, 1), 6, 3),
		"asym.npz":       statsNPZ(t, 2, []float64{2, 1, 0.5, 2}),
		"indef.npz":      statsNPZ(t, 2, []float64{1, 2, 2, 1}),
		"negvar.npz":     statsNPZ(t, 2, []float64{-1, 0, 0, 1}),
		"nan.npz":        statsNPZ(t, 2, []float64{math.NaN(), 0, 0, 1}),
		"good.npz":       statsNPZ(t, 2, sym),
		"good3.npz":      statsNPZ(t, 3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}),
		"ratio.npz":      npzRaw(t, "sigma.npy", make([]byte, 1<<16), 15<<30),
		"inflates.npz":   npzRaw(t, "sigma.npy", make([]byte, 8<<20), 1<<10),
		"zerowidth.npy":  npyBytes([]int{5, 0}, nil),
		"nanimages.npy":  npyBytes([]int{2, 4}, []float64{0, math.NaN(), 0, 0, 0, 0, 0, 0}),
		"notnpy.npy":     []byte("hello"),
		"hugeshape.npy":  npyBytes([]int{1 << 30, 1 << 30}, nil),
		"shortpts.npy":   npyBytes([]int{1, 1}, []float64{0.5}),
		"negstep.yaml":   []byte("warmup: -3\n"),
		"batch.yaml":     []byte("nf: 99999999999\n"),
		"sdeHOLD.yaml":   []byte("sde: HOLD\n"),
		"nanlr.yaml":     []byte("lr: .nan\n"),
		"binary.yaml":    ckptBytes[:200],
		"idxbomb.gz":     nil, // filled below
		"empty.pth":      {},
		"text.pth":       []byte("not a pickle"),
		"emptystats.npz": statsNPZ(t, 1, []float64{0})[:30],
	}
	for name, b := range hostile {
		if b != nil {
			if err := os.WriteFile(f(name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, b := range hostile {
		if b != nil && len(b) > 8<<10 && !strings.HasSuffix(name, ".npz") {
			t.Fatalf("hostile %s is %d bytes, want a small file", name, len(b))
		}
	}
	// A CSV that plot nfe reads, and labelled IDX files for classifier train.
	fm := f("fmnist")
	if err := os.Mkdir(fm, 0o755); err != nil {
		t.Fatal(err)
	}
	newRun := f("new-run") // must not exist after any case
	smp := func(extra ...string) []string {
		return append([]string{"sample", "--ckpt", runCopy, "--n", "10", "--nfe", "10", "--threads", "1"}, extra...)
	}
	orc := func(extra ...string) []string {
		return append([]string{"sample", "--oracle", "--n", "10", "--nfe", "10"}, extra...)
	}
	tt := func(extra ...string) []string {
		return append([]string{"train", "--hidden", "16", "--layers", "2", "--batch", "64", "--steps", "5", "--threads", "1", "--out", newRun}, extra...)
	}
	flow := func(extra ...string) []string {
		return append([]string{"plot", "flow", "--paths", "2", "--tol", "1e-3"}, extra...)
	}
	blocks := func(extra ...string) []string {
		return append([]string{"plot", "blocks", "--paths", "2", "--steps", "10"}, extra...)
	}
	moments := func(extra ...string) []string {
		return append([]string{"plot", "moments", "--n", "10", "--steps", "10"}, extra...)
	}
	pnfe := func(extra ...string) []string {
		return append([]string{"plot", "nfe", "--csv", f("study.png")}, extra...)
	}
	study := func(extra ...string) []string {
		return append([]string{"experiment", "samplers", "--samplers", "hold-lt", "--nfe", "10", "--grids", "uniform", "--samples", "100", "--floor-reps", "1"}, extra...)
	}
	table2 := func(extra ...string) []string {
		return append([]string{"experiment", "nfe", "--samples", "100", "--trained-samples", "100", "--nfe", "10", "--floor-reps", "1"}, extra...)
	}
	fidStats := func(extra ...string) []string {
		return append([]string{"fid", "--ref", f("good.npz"), "--samples", f("good.npz")}, extra...)
	}
	fidSave := func(extra ...string) []string {
		return append([]string{"fid", "--ref", f("samples.npy"), "--samples", f("samples.npy"), "--features", f("weights.safetensors")}, extra...)
	}
	clf := func(extra ...string) []string {
		return append([]string{"classifier", "train", "--data", "fashion-mnist:" + fm, "--epochs", "1"}, extra...)
	}
	ev := func(extra ...string) []string { return append(append([]string{"eval"}, extra...), f("samples.npy")) }
	type tcase struct {
		name string
		args []string
		code int
		want string
	}
	var cases []tcase
	add := func(name string, code int, want string, args []string) {
		cases = append(cases, tcase{name, args, code, want})
	}

	// 1. Outputs onto what a command must not replace, for every writer.
	writers := []struct {
		name string
		ext  string
		args func(out string) []string
	}{
		{"sample npy", ".npy", func(o string) []string { return smp("--out", o) }},
		{"sample png", ".png", func(o string) []string { return smp("--out", o) }},
		{"oracle npy", ".npy", func(o string) []string { return orc("--out", o) }},
		{"plot flow", ".png", func(o string) []string { return flow("--out", o) }},
		{"plot blocks", ".png", func(o string) []string { return blocks("--out", o) }},
		{"plot moments", ".png", func(o string) []string { return moments("--out", o) }},
		{"plot nfe", ".png", func(o string) []string { return pnfe("--out", o) }},
		{"experiment samplers csv", ".csv", func(o string) []string { return study("--format", "csv", "--out", o) }},
		{"experiment samplers md", ".md", func(o string) []string { return study("--out", o) }},
		{"experiment nfe", ".csv", func(o string) []string { return table2("--out", o) }},
		{"fid save-stats", ".npz", func(o string) []string { return fidSave("--save-stats", o) }},
		{"classifier train", ".safetensors", func(o string) []string { return clf("--out", o) }},
	}
	for _, wr := range writers {
		add(wr.name+" onto a link", 2, "symbolic link", wr.args(f("link"+wr.ext)))
		add(wr.name+" onto a FIFO", 2, "fifo"+wr.ext, wr.args(f("fifo"+wr.ext)))
		if wr.ext != ".npy" && wr.ext != ".png" {
			add(wr.name+" onto a directory", 2, "directory", wr.args(f("dir"+wr.ext)))
		}
		if wr.ext != ".safetensors" {
			add(wr.name+" onto a checkpoint", 2, "holds a safetensors checkpoint", wr.args(f("weights"+wr.ext)))
		} else {
			add(wr.name+" onto a run's checkpoint", 2, "belongs to the run", wr.args(filepath.Join(runCopy, ckptName)))
		}
		if wr.ext == ".npy" || wr.ext == ".png" {
			add(wr.name+" onto a text file", 2, "holds a text file", wr.args(f("notes"+wr.ext)))
		}
		add(wr.name+" into a missing directory", 2, "missing", wr.args(filepath.Join(w, "missing", "out"+wr.ext)))
	}
	// Outputs onto a run's own files and onto inputs.
	add("sample onto the run's data.npy", 2, "belongs to the run", smp("--out", filepath.Join(ptsRun, "data.npy")))
	add("sample onto the user's --train-data", 2, "input of this command", []string{"sample", "--ckpt", ptsRun, "--n", "5", "--train-data", pts, "--out", pts})
	add("sample onto its --ckpt file", 2, "", smp("--out", filepath.Join(runCopy, ckptName)))
	add("experiment samplers onto a run's log", 2, "belongs to the run", study("--format", "csv", "--out", filepath.Join(runCopy, logName)))
	add("experiment samplers onto a run's config", 2, "belongs to the run", study("--out", filepath.Join(runCopy, configName)))
	add("experiment nfe onto a run's log", 2, "belongs to the run", table2("--out", filepath.Join(runCopy, logName)))
	add("experiment nfe onto its --hold checkpoint dir log", 2, "", table2("--hold", runCopy, "--no-oracle", "--out", filepath.Join(runCopy, logName)))
	add("plot nfe onto its own --csv", 2, "input of this command", pnfe("--out", f("study.png")))
	add("fid save-stats onto the --ref images", 2, "", fidSave("--save-stats", f("samples.npy")))
	add("fid save-stats onto the features", 2, "", fidSave("--save-stats", f("weights.safetensors")))
	add("fid save-stats onto the samples stats", 2, "", []string{"fid", "--ref", f("samples.npy"), "--samples", f("good.npz"), "--features", f("weights.safetensors"), "--save-stats", f("good.npz")})
	add("classifier onto a run's checkpoint under its lock dir", 2, "belongs to the run", clf("--out", filepath.Join(ptsRun, ckptName)))
	add("classifier onto its data folder", 2, "", clf("--out", fm))
	add("plot moments onto a run's ckpt", 2, "want a .png", moments("--hold", run2D, "--out", filepath.Join(run2D, ckptName)))
	add("sample png into the lock of a run", 2, "", smp("--out", filepath.Join(runCopy, runlock.Name)))
	add("same output twice", 2, "the same file", smp("--out", f("twice.npy"), "--out", f("twice.npy")))
	add("demo into a run directory", 2, "run directory", []string{"demo", "--steps", "1", "--n", "10", "--nfe", "10", "--out", runCopy})
	add("demo into a file", 2, "is a file", []string{"demo", "--steps", "1", "--n", "10", "--nfe", "10", "--out", f("precious.txt")})
	add("demo over a checkpoint named samples.png", 2, "holds", []string{"demo", "--steps", "1", "--n", "10", "--nfe", "10", "--out", f("demoout")})
	if err := os.MkdirAll(f("demoout"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f("demoout"), "samples.png"), ckptBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	add("sample --n beyond the disk", 2, "free", orc("--n", "4000000000000000", "--nfe", "2", "--out", f("huge.npy")))

	// Checkpoints that parse but hold nonsense: NaN weights, a negative step.
	nanRun, negRun := f("nanrun"), f("negrun")
	for _, d := range []string{nanRun, negRun} {
		if err := os.CopyFS(d, os.DirFS(ptsRun)); err != nil { // its (free) lock file included
			t.Fatal(err)
		}
	}
	{
		ptsCkpt, err := os.ReadFile(filepath.Join(ptsRun, ckptName))
		if err != nil {
			t.Fatal(err)
		}
		nb := slices.Clone(ptsCkpt)
		start := 8 + int(binary.LittleEndian.Uint64(nb))
		for i := start; i+4 <= len(nb); i += 4 {
			binary.LittleEndian.PutUint32(nb[i:], 0x7fc00000) // every value NaN
		}
		if err := os.WriteFile(filepath.Join(nanRun, ckptName), nb, 0o644); err != nil {
			t.Fatal(err)
		}
		neg := bytes.Replace(ptsCkpt, []byte(`"step":"20"`), []byte(`"step":"-2"`), 1)
		if bytes.Equal(neg, ptsCkpt) {
			t.Fatal(`no "step":"20" in the checkpoint's header`)
		}
		if err := os.WriteFile(filepath.Join(negRun, ckptName), neg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	add("sample a checkpoint of NaN weights", 2, "holds NaN", []string{"sample", "--ckpt", nanRun, "--n", "5", "--out", f("s.npy")})
	add("resume a checkpoint of NaN weights", 2, "holds NaN", []string{"train", "--resume", "--out", nanRun, "--threads", "1"})
	add("eval against a checkpoint of NaN weights", 2, "holds NaN", ev("--ckpt", nanRun))
	add("sample a checkpoint with a negative step", 2, "negative step", []string{"sample", "--ckpt", negRun, "--n", "5", "--out", f("s.npy")})
	add("resume a checkpoint with a negative step", 2, "negative step", []string{"train", "--resume", "--out", negRun, "--threads", "1"})

	// 2. Locks: another host, a link, a FIFO.
	add("resume under another host's lock", 2, "--force-unlock", []string{"train", "--resume", "--out", otherHost, "--threads", "1"})
	add("train into a run with a linked lock", 2, "symbolic link", []string{"train", "--resume", "--out", linkLock, "--threads", "1"})
	add("train into a run with a FIFO lock", 2, "not a regular file", []string{"train", "--resume", "--out", fifoLock, "--threads", "1"})
	add("sample into another host's run dir", 2, "", smp("--out", filepath.Join(otherHost, "s.npy"), "--n", "0"))

	// 3. Small hostile files against every loader.
	for _, p := range []string{"storage34.pth", "frame40.pth", "unicode40.pth", "truncated.pth", "empty.pth", "text.pth"} {
		add("fid features "+p, 2, p, []string{"fid", "--ref", f("samples.npy"), "--samples", f("samples.npy"), "--features", "inception:" + f(p)})
	}
	add("fid features stride-0 view", 2, "budget", []string{"fid", "--ref", f("samples.npy"), "--samples", f("samples.npy"), "--features", "inception:" + f("stride0.pth")})
	add("fid features FIFO pth", 2, "named pipe", []string{"fid", "--ref", f("samples.npy"), "--samples", f("samples.npy"), "--features", "inception:" + f("fifo.pth")})
	add("fid features /dev/zero", 2, "device", []string{"fid", "--ref", f("samples.npy"), "--samples", f("samples.npy"), "--features", "inception:/dev/zero"})
	for _, s := range []struct{ file, want string }{
		{"asym.npz", "not symmetric"}, {"indef.npz", "positive semi-definite"}, {"negvar.npz", "negative variance"},
		{"nan.npz", "NaN"}, {"ratio.npz", "declares"}, {"inflates.npz", "inflates"}, {"emptystats.npz", "zip"},
		{"fifo.npz", "named pipe"}, {"dir.npz", "directory"},
	} {
		add("fid ref "+s.file, 2, s.want, fidStats("--ref", f(s.file)))
		add("fid samples "+s.file, 2, s.want, fidStats("--samples", f(s.file)))
	}
	add("fid stats of other dimensions", 2, "dimension", fidStats("--samples", f("good3.npz")))
	add("oracle image folder with a FIFO", 2, "named pipe", orc("--data", "images:"+f("fifoimgs"), "--out", f("s.npy")))
	add("oracle PNG bomb under a budget", 2, "budget", orc("--max-memory", "256MiB", "--data", "images:"+f("bombimgs"), "--out", f("s.npy")))
	add("train on an image folder with a FIFO", 2, "named pipe", tt("--data", "images:"+f("fifoimgs"), "--model", "ncsnpp-small"))
	add("train on a PNG bomb under a budget", 2, "budget", tt("--max-memory", "256MiB", "--data", "images:"+f("bombimgs"), "--model", "ncsnpp-small"))
	add("train --config FIFO", 2, "named pipe", tt("--config", f("fifo.yaml")))
	add("train --config /dev/zero", 2, "device", tt("--config", "/dev/zero"))
	add("train --config binary", 2, "", tt("--config", f("binary.yaml")))
	add("train --config negative steps", 2, "-3", tt("--config", f("negstep.yaml")))
	add("train --config huge nf", 2, "nf", tt("--config", f("batch.yaml")))
	add("train --config NaN lr", 2, "NaN", tt("--config", f("nanlr.yaml")))
	add("train --data FIFO npy", 2, "named pipe", tt("--data", f("fifo.npy")))
	add("train --data /dev/zero", 2, "", tt("--data", "/dev/zero"))
	add("train --data a checkpoint as npy", 2, "npy", tt("--data", f("weights.npy")))
	add("train --data zero-width npy", 2, "no points", tt("--data", f("zerowidth.npy")))
	add("train --data huge shape npy", 2, "", tt("--data", f("hugeshape.npy")))
	add("eval FIFO samples", 2, "named pipe", []string{"eval", f("fifo.npy")})
	add("eval zero-width samples", 2, "at least 1 value", []string{"eval", f("zerowidth.npy")})
	add("eval one point", 2, "at least 2 points", []string{"eval", f("shortpts.npy")})
	add("eval huge-shape header", 2, "", []string{"eval", f("hugeshape.npy")})
	add("eval a text file named npy", 2, "", []string{"eval", f("notes.npy")})
	add("sample --ckpt FIFO", 2, "named pipe", smp("--ckpt", f("fifo.safetensors"), "--out", f("s.npy")))
	add("sample --ckpt /dev/zero", 2, "device", smp("--ckpt", "/dev/zero", "--out", f("s.npy")))
	add("sample --train-data FIFO", 2, "", []string{"sample", "--ckpt", ptsRun, "--n", "5", "--train-data", f("fifo.npy"), "--out", f("s.npy")})
	add("nll --ckpt FIFO", 2, "named pipe", []string{"nll", "--ckpt", f("fifo.safetensors")})
	add("plot nfe --csv FIFO", 2, "named pipe", []string{"plot", "nfe", "--csv", f("fifo.csv"), "--out", f("p.png")})
	add("plot nfe --csv a checkpoint", 2, "", []string{"plot", "nfe", "--csv", f("weights.csv"), "--out", f("p.png")})
	add("plot moments --hold FIFO", 2, "", moments("--hold", f("fifo.safetensors"), "--out", f("p.png")))
	add("classifier --data FIFO dir", 2, "", []string{"classifier", "train", "--data", "images:" + f("fifoimgs"), "--out", f("c.safetensors")})
	add("export --ckpt FIFO", 2, "", []string{"export", "--ckpt", f("fifo.safetensors"), "--out", f("exp")})

	// 4. Numbers: bounds, NaN and Inf, for every command with a size flag.
	for _, v := range []string{"-1", "99999", "100000000"} {
		add("fid threads "+v, 2, "--threads", fidStats("--threads", v))
		add("classifier threads "+v, 2, "--threads", clf("--threads", v))
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"fid n huge", fidStats("--n", "9000000000"), "--n"},
		{"fid ref-n negative", fidStats("--ref-n", "-1"), ""},
		{"fid batch huge", fidStats("--batch", "100000000"), "--batch"},
		{"fid kid-subsets huge", fidStats("--kid-subsets", "1000000000"), "--kid-subsets"},
		{"fid kid-subset-size huge", fidStats("--kid-subset-size", "1000000000"), "--kid-subset-size"},
		{"fid image-shape wraps", []string{"fid", "--ref", f("samples.npy"), "--samples", f("good.npz"), "--features", f("weights.safetensors"), "--image-shape", "1,4294967296,4294967296"}, ""},
		{"fid image-shape huge channels", []string{"fid", "--ref", f("samples.npy"), "--samples", f("good.npz"), "--features", f("weights.safetensors"), "--image-shape", "1000000,1,1"}, ""},
		{"classifier batch huge", clf("--batch", "100000000"), "--batch"},
		{"classifier lr Inf", clf("--lr", "Inf"), ""},
		{"classifier lr NaN", clf("--lr", "NaN"), ""},
		{"classifier lr huge", clf("--lr", "1e30"), "--lr"},
		{"classifier epochs huge", clf("--epochs", "1000000000"), "--epochs"},
		{"classifier limit negative", clf("--limit", "-5"), ""},
		{"sample n 1e18", orc("--n", "1000000000000000000", "--out", f("s.npy")), ""},
		{"sample nfe huge", orc("--nfe", "1000000000", "--out", f("s.npy")), "--nfe"},
		{"sample steps huge", orc("--nfe", "0", "--steps", "1000000000", "--out", f("s.npy")), "--steps"},
		{"sample threads huge", orc("--threads", "100000", "--out", f("s.npy")), "--threads"},
		{"plot flow paths huge", flow("--paths", "100000000", "--out", f("p.png")), "--paths"},
		{"plot blocks paths huge", blocks("--paths", "100000000", "--out", f("p.png")), "--paths"},
		{"plot blocks steps huge", blocks("--steps", "1000000000", "--out", f("p.png")), "--steps"},
		{"plot moments n huge", moments("--n", "1000000000", "--out", f("p.png")), "--n"},
		{"plot moments steps huge", moments("--steps", "1000000000", "--out", f("p.png")), "--steps"},
		{"experiment samplers samples huge", study("--samples", "2000000000"), "--samples"},
		{"experiment samplers floor-reps huge", study("--floor-reps", "1000000000"), "--floor-reps"},
		{"experiment samplers workers huge", study("--workers", "1000000"), "--workers"},
		{"experiment samplers seeds huge", study("--seeds", "1000000000"), "--seeds"},
		{"experiment samplers nfe huge", study("--nfe", "2000000000"), "NFE"},
		{"experiment nfe samples huge", table2("--samples", "2000000000", "--out", f("t.csv")), "--samples"},
		{"experiment nfe floor-reps huge", table2("--floor-reps", "1000000000", "--out", f("t.csv")), "--floor-reps"},
		{"experiment nfe nfe huge", table2("--nfe", "2000000000", "--out", f("t.csv")), "--nfe"},
		{"experiment nfe workers huge", table2("--workers", "100000", "--out", f("t.csv")), "--workers"},
		{"model info batch huge", []string{"model", "info", "--model", "ncsnpp-small", "--batch", "100000000"}, "--batch"},
		{"model info batch negative", []string{"model", "info", "--model", "ncsnpp-small", "--batch", "-1"}, "--batch"},
		{"model info threads huge", []string{"model", "info", "--model", "ncsnpp-small", "--batch", "1", "--threads", "100000"}, "--threads"},
		{"bench gemm m huge", []string{"bench", "gemm", "--m", "1000000000"}, "--m"},
		{"bench gemm sides over the budget", []string{"bench", "gemm", "--m", "65536", "--k", "65536", "--n", "65536"}, "budget"},
		{"bench gemm repeats huge", []string{"bench", "gemm", "--repeats", "2000000000"}, "--repeats"},
		{"bench gemm threads huge", []string{"bench", "gemm", "--threads", "100000"}, "--threads"},
		{"bench triad n huge", []string{"bench", "triad", "--n", "9000000000"}, "--n"},
		{"bench triad n over the budget", []string{"bench", "triad", "--n", "2000000000"}, "budget"},
		{"bench mlp batch huge", []string{"bench", "mlp", "--batch", "1000000000"}, "--batch"},
		{"bench mlp hidden huge", []string{"bench", "mlp", "--hidden", "1000000"}, "--hidden"},
		{"bench train steps huge", []string{"bench", "train", "--steps", "2000000000"}, "--steps"},
		{"bench train batch huge", []string{"bench", "train", "--batch", "100000000"}, "--batch"},
		{"eval n huge", ev("--n", "2000000000"), "--n"},
		{"eval kernel-points huge", ev("--kernel-points", "100000000"), "--kernel-points"},
		{"eval projections huge", ev("--projections", "100000000"), "--projections"},
		{"max-memory nonsense", orc("--max-memory", "lots", "--out", f("s.npy")), "--max-memory"},
		{"max-memory zero", orc("--max-memory", "0", "--out", f("s.npy")), "--max-memory"},
		{"max-memory NaN", orc("--max-memory", "NaN", "--out", f("s.npy")), "--max-memory"},
		{"max-memory below a MiB", orc("--max-memory", "1000", "--out", f("s.npy")), "1 MiB"},
		{"train lr Inf", tt("--lr", "Inf"), "+Inf"},
		{"train sde HOLD", tt("--sde", "HOLD"), "HOLD"},
		{"train batch beyond int", tt("--batch", "99999999999999999999"), ""},
		{"train steps beyond int", tt("--steps", "1e30"), ""},
		{"train fourier huge", tt("--fourier", "100000000"), ""},
		{"train hidden huge", tt("--hidden", "100000000"), ""},
		{"sde t -Inf", []string{"sde", "--t", "-Inf"}, ""},
		{"sde order huge", []string{"sde", "--order", "1000000000", "--t", "0.5"}, ""},
		{"sde astep Inf", []string{"sde", "--t", "0.5", "--astep", "Inf"}, ""},
		{"demo n huge", []string{"demo", "--n", "1000000000000", "--steps", "1", "--out", f("demo-n")}, ""},
		{"demo nfe huge", []string{"demo", "--nfe", "2000000000", "--steps", "1", "--out", f("demo-nfe")}, ""},
	} {
		add(c.name, 2, c.want, c.args)
	}
	if len(cases) < 150 {
		t.Fatalf("%d cases, want at least 150", len(cases))
	}
	t.Logf("%d adversarial cases", len(cases))
	roots := []string{w, filepath.Dir(hold1D)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := fileStates(t, roots...)
			r := holdctlCapped(t, tc.args...)
			msg := strings.TrimRight(r.stderr, "\n")
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
			if d := diffSnapshots(before, fileStates(t, roots...)); len(d) > 0 {
				t.Errorf("holdctl %s changed files: %v", cmdline, d)
			}
		})
	}
	_ = data.NameGMM1D
}
