package serve

// Tests of holdctl serve's handlers on a tiny model (ncsnpp-tiny, one training step on 16×16 IDX
// images: its restorations take milliseconds), through httptest. The command itself, started as the
// binary, is tested in cmd/holdctl (TestServeCommand).

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"holdgo/dist"
	"holdgo/imagedata"
	"holdgo/internal/parallel"
	"holdgo/restore"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// serveSide is the tiny model's image side: 16 ≥ the 11 pixels SSIM needs, a multiple of 4 (sr4).
const serveSide = 16

// writeIDXSide writes n deterministic side×side IDX images as DIR/<prefix>-images-idx3-ubyte.
func writeIDXSide(t *testing.T, dir, prefix string, n, side int) {
	t.Helper()
	b := []byte{0, 0, 8, 3}
	for _, d := range []int{n, side, side} {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	for i := range n * side * side {
		b = append(b, byte((i*37+i/side*11)%251))
	}
	if err := os.WriteFile(filepath.Join(dir, prefix+"-images-idx3-ubyte"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The tiny model, trained once per test binary, and the folder of its data (train and t10k images).
var (
	serveModelOnce sync.Once
	serveModelDir  string
	serveModelErr  error
)

// serveModel trains ncsnpp-tiny for one step (train.Run, as holdctl train --steps 1 --batch 2) on 16×16 images (about a second) and returns its run
// directory and the data folder.
func serveModel(t *testing.T) (run, data string) {
	t.Helper()
	serveModelOnce.Do(func() {
		dir, err := os.MkdirTemp("", "holdctl-serve-")
		if err != nil {
			serveModelErr = err
			return
		}
		serveModelDir = dir
		writeIDXSide(t, dir, "train", 8, serveSide)
		writeIDXSide(t, dir, "t10k", 5, serveSide)
		parallel.SetThreads(1)
		opt := train.RunOptions{Dir: filepath.Join(dir, "run"), LogEvery: 1, Out: io.Discard, DeviceName: "cpu",
			OpenDevice: func() (tensor.Device, error) { return tensor.CPU, nil },
			Configure: func(cfg train.RunConfig) (train.RunConfig, error) {
				cfg.Data, cfg.Model, cfg.Steps, cfg.Batch = "mnist:"+dir, "ncsnpp-tiny", 1, 2
				return cfg, nil
			}}
		if err := train.Run(context.Background(), dist.Single{}, opt); err != nil {
			serveModelErr = fmt.Errorf("train: %v", err)
		}
	})
	if serveModelErr != nil {
		t.Fatal(serveModelErr)
	}
	return filepath.Join(serveModelDir, "run"), serveModelDir
}

// testServer is a server over the tiny model with its test images (in this process, or the command's
// at url), and its log.
type testServer struct {
	url    string
	client *http.Client
	s      *Server
	log    *bytes.Buffer
	mu     *sync.Mutex
}

// logText is what the server logged so far.
func (ts testServer) logText() string {
	if ts.mu == nil {
		return ""
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.log.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newTestServer(t *testing.T) testServer {
	t.Helper()
	run, dir := serveModel(t)
	m, err := train.LoadModel(run, false, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	mu := &sync.Mutex{}
	s, err := New(Config{Ckpt: run, Model: m, In: "mnist:" + dir + "#test", InSet: true,
		Log: log.New(lockedWriter{mu, &buf}, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return testServer{url: hs.URL, client: hs.Client(), s: s, log: &buf, mu: mu}
}

// reply is one answer of the server: its status, headers, body, and the body as JSON (nil if it
// is not JSON).
type reply struct {
	code   int
	header http.Header
	body   []byte
	json   map[string]any
}

func (r reply) errMsg() string {
	s, _ := r.json["error"].(string)
	return s
}

func (ts testServer) do(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{code: resp.StatusCode, header: resp.Header, body: body}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, &r.json); err != nil {
			t.Fatalf("%s %s: %v in %q", req.Method, req.URL, err, body)
		}
	}
	return r
}

func (ts testServer) get(t *testing.T, path string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ts.do(t, req)
}

// post sends fields (and a file as the field "image" when file is not nil) as the page does:
// multipart, with the page's header.
func (ts testServer) post(t *testing.T, path string, fields map[string]string, file []byte) reply {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if file != nil {
		fw, err := mw.CreateFormFile("image", "image.png")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(file)
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, ts.url+path, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set(Header, "test")
	return ts.do(t, req)
}

// waitJob polls job id until it is done or failed (a minute at most) and returns its last status.
func (ts testServer) waitJob(t *testing.T, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		r := ts.get(t, "/api/job?id="+id)
		if r.code != http.StatusOK {
			t.Fatalf("job %s: %d %s", id, r.code, r.body)
		}
		if st := r.json["state"]; st == jobDone || st == jobFailed {
			return r.json
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("job %s did not finish in a minute", id)
	return nil
}

// restoreOK queues a restoration, waits for it and fails unless it is done.
func (ts testServer) restoreOK(t *testing.T, fields map[string]string) map[string]any {
	t.Helper()
	r := ts.post(t, "/api/restore", fields, nil)
	if r.code != http.StatusAccepted {
		t.Fatalf("restore %v: %d %s", fields, r.code, r.body)
	}
	st := ts.waitJob(t, r.json["id"].(string))
	if st["state"] != jobDone {
		t.Fatalf("restore %v: %v", fields, st)
	}
	return st
}

// decodePNG decodes b, failing the test unless it is a PNG of w×h.
func decodePNG(t *testing.T, b []byte, w, h int) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG (%v): %.80q", err, b)
	}
	if s := img.Bounds().Size(); s.X != w || s.Y != h {
		t.Fatalf("PNG of %d×%d, want %d×%d", s.X, s.Y, w, h)
	}
	return img
}

// grayPNG encodes a side×side gray image with levels f(x, y).
func grayPNG(t *testing.T, side int, f func(x, y int) uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			img.SetGray(x, y, color.Gray{Y: f(x, y)})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestServeRestore: the page, its script, a test image; a restoration of test image 1 (inpaint-box,
// ddnm, NFE 5) queued, followed to the end, with its numbers (RMS(Ax − y) ≤ 1e-6 at σ_y = 0) and its
// three images, the restoration also as a download; its PSNR and SSIM are holdctl restore's on the same
// image (--first 1 --n 1), number for number.
func TestServeRestore(t *testing.T) {
	ts := newTestServer(t)
	page := ts.get(t, "/")
	if page.code != http.StatusOK || !bytes.Contains(page.body, []byte(`<canvas id="canvas"`)) || !bytes.Contains(page.body, []byte("inpaint-mask")) {
		t.Fatalf("the page: %d %.300s", page.code, page.body)
	}
	if r := ts.get(t, "/static/page.js"); r.code != http.StatusOK || !bytes.Contains(r.body, []byte("/api/restore")) {
		t.Fatalf("page.js: %d", r.code)
	}
	if r := ts.get(t, "/api/test-image?i=4"); r.code != http.StatusOK {
		t.Fatalf("test image 4: %d %s", r.code, r.body)
	} else {
		decodePNG(t, r.body, serveSide, serveSide)
	}
	st := ts.restoreOK(t, map[string]string{"image": "test:1", "task": "inpaint-box", "box": "6", "method": "ddnm", "nfe": "5", "seed": "3"})
	rep := st["report"].(map[string]any)
	if st["evaluations"] != 5.0 || rep["nfe"] != 5.0 || !(rep["rms_residual_max"].(float64) <= 1e-6) {
		t.Errorf("evaluations %v, NFE %v, RMS(Ax − y) up to %v; want 5, 5, ≤ 1e-6", st["evaluations"], rep["nfe"], rep["rms_residual_max"])
	}
	id := st["id"].(string)
	for _, name := range []string{"degraded", "restored", "truth"} {
		r := ts.get(t, "/api/image?id="+id+"&name="+name)
		if r.code != http.StatusOK {
			t.Fatalf("image %s: %d %s", name, r.code, r.body)
		}
		decodePNG(t, r.body, serveSide, serveSide)
	}
	if r := ts.get(t, "/api/image?id="+id+"&name=restored&download=1"); !strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
		t.Errorf("download: Content-Disposition %q", r.header.Get("Content-Disposition"))
	}

	// ΠGDM adds a vector–Jacobian product to every forward pass, DPS one a step: the progress counts them.
	for method, vjp := range map[string]float64{"pigdm": 4, "dps": 3} {
		st := ts.restoreOK(t, map[string]string{"image": "test:0", "task": "sr2", "noise": "0.05", "method": method, "nfe": "4"})
		if rep := st["report"].(map[string]any); st["evaluations"] != 4+vjp || st["evaluations_expected"] != 4+vjp || rep["vjp"] != vjp {
			t.Errorf("%s at NFE 4: %v of %v evaluations, %v VJPs; want %v of %[5]v, %v VJPs", method, st["evaluations"], st["evaluations_expected"], rep["vjp"], 4+vjp, vjp)
		}
	}

	// holdctl restore's own path on the same image.
	_, dir := serveModel(t)
	p := ts.s.restoreDefaults
	p.Task.Name, p.Task.Box, p.Method, p.NFE, p.Seed = "inpaint-box", 6, "ddnm", 5, 3
	p.In, p.First = "mnist:"+dir+"#test", 1
	run, err := restore.Prepare(p, ts.s.model)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.LoadImages(); err != nil {
		t.Fatal(err)
	}
	out, stats, err := run.Restore()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := run.Measure(io.Discard, out, stats, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cli.PSNR != rep["psnr"] || cli.SSIM != rep["ssim"] {
		t.Errorf("the page's PSNR %v, SSIM %v; holdctl restore's %v, %v", rep["psnr"], rep["ssim"], cli.PSNR, cli.SSIM)
	}
}

// TestServeMask: an uploaded PNG restored with a drawn mask (inpaint-mask, ddnm, σ_y = 0) keeps every
// known pixel, level for level, in the restoration's PNG.
func TestServeMask(t *testing.T) {
	ts := newTestServer(t)
	level := func(x, y int) uint8 { return uint8(16*x + y) }
	up := ts.post(t, "/api/upload", nil, grayPNG(t, serveSide, level))
	if up.code != http.StatusOK {
		t.Fatalf("upload: %d %s", up.code, up.body)
	}
	id := up.json["id"].(string)
	if r := ts.get(t, "/api/upload-image?id="+id); r.code != http.StatusOK {
		t.Fatalf("the upload's image: %d %s", r.code, r.body)
	} else if img := decodePNG(t, r.body, serveSide, serveSide); color.GrayModel.Convert(img.At(3, 5)).(color.Gray).Y != level(3, 5) {
		t.Fatalf("the upload's image differs from the upload")
	}
	mask := []byte(strings.Repeat("0", serveSide*serveSide))
	for y := 4; y < 10; y++ {
		for x := 2; x < 7; x++ {
			mask[y*serveSide+x] = '1'
		}
	}
	st := ts.restoreOK(t, map[string]string{"image": "upload:" + id, "task": "inpaint-mask", "mask": string(mask), "nfe": "4"})
	rep := st["report"].(map[string]any)
	if task := rep["task"].(map[string]any); task["measurements"] != float64(serveSide*serveSide-30) || !(rep["rms_residual_max"].(float64) <= 1e-6) {
		t.Errorf("%v measurements, RMS(Ax − y) up to %v; want %d and ≤ 1e-6", task["measurements"], rep["rms_residual_max"], serveSide*serveSide-30)
	}
	img := decodePNG(t, ts.get(t, "/api/image?id="+st["id"].(string)+"&name=restored").body, serveSide, serveSide)
	for y := range serveSide {
		for x := range serveSide {
			if got := color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y; mask[y*serveSide+x] == '0' && got != level(x, y) {
				t.Fatalf("known pixel (%d, %d) is %d in the restoration, %d in the upload", x, y, got, level(x, y))
			}
		}
	}
}

// TestServeSample: plain sampling of 5 images at NFE 6 shows a 3-column grid of 16×16 images
// (pixels doubled, 2-pixel borders).
func TestServeSample(t *testing.T) {
	ts := newTestServer(t)
	r := ts.post(t, "/api/sample", map[string]string{"n": "5", "nfe": "6", "seed": "2"}, nil)
	if r.code != http.StatusAccepted {
		t.Fatalf("sample: %d %s", r.code, r.body)
	}
	st := ts.waitJob(t, r.json["id"].(string))
	if st["state"] != jobDone {
		t.Fatalf("sample: %v", st)
	}
	rep := st["report"].(map[string]any)
	if rep["nfe"] != 6.0 || rep["sampler"] != sample.ImageSampler || rep["n"] != 5.0 {
		t.Errorf("report %v: want NFE 6 with %s, 5 images", rep, sample.ImageSampler)
	}
	tile := 2*serveSide + 2
	decodePNG(t, ts.get(t, "/api/image?id="+st["id"].(string)+"&name=grid").body, 2+3*tile, 2+2*tile)
}

// TestServeBadRequests: every bad request is answered with a status ≥ 400 and a message that says
// what is wrong; no path is read; the server answers and restores afterwards.
func TestServeBadRequests(t *testing.T) {
	ts := newTestServer(t)
	colour := func() []byte {
		img := image.NewRGBA(image.Rect(0, 0, serveSide, serveSide))
		for i := range img.Pix {
			img.Pix[i] = uint8(i * 7)
		}
		for i := 3; i < len(img.Pix); i += 4 {
			img.Pix[i] = 255
		}
		var b bytes.Buffer
		png.Encode(&b, img)
		return b.Bytes()
	}()
	transparent := func() []byte {
		img := image.NewNRGBA(image.Rect(0, 0, serveSide, serveSide))
		var b bytes.Buffer
		png.Encode(&b, img)
		return b.Bytes()
	}()
	good := map[string]string{"image": "test:0", "task": "inpaint-box", "box": "6", "nfe": "4"}
	with := func(k, v string) map[string]string {
		f := map[string]string{}
		for a, b := range good {
			f[a] = b
		}
		if v == "" {
			delete(f, k)
		} else {
			f[k] = v
		}
		return f
	}
	cases := []struct {
		name   string
		path   string
		fields map[string]string
		file   []byte
		code   int
		msg    string
	}{
		{"upload not a PNG", "/api/upload", nil, []byte("GIF89a this is not a PNG"), 400, "not a PNG"},
		{"upload empty", "/api/upload", nil, []byte{}, 400, "not a PNG file (an empty file)"},
		{"upload truncated PNG", "/api/upload", nil, grayPNG(t, serveSide, func(x, y int) uint8 { return 9 })[:40], 400, "broken PNG"},
		{"upload of another size", "/api/upload", nil, grayPNG(t, 28, func(x, y int) uint8 { return 9 }), 400, "the PNG is 28×28 pixels; the model takes 16×16"},
		{"upload in colour", "/api/upload", nil, colour, 400, "has colour"},
		{"upload transparent", "/api/upload", nil, transparent, 400, "transparent"},
		{"upload oversize", "/api/upload", nil, bytes.Repeat([]byte{7}, serveMaxBody+1), 413, "larger than 1024 KiB"},
		{"upload without a file", "/api/upload", map[string]string{"image": "/etc/passwd"}, nil, 400, "no image in the upload"},
		{"unknown task", "/api/restore", with("task", "colorize"), nil, 400, `unknown task "colorize"`},
		{"no task", "/api/restore", with("task", ""), nil, 400, `unknown task ""`},
		{"unknown method", "/api/restore", with("method", "ddrm"), nil, 400, `unknown method "ddrm"`},
		{"method none", "/api/restore", with("method", "none"), nil, 400, `unknown method "none"`},
		{"replace on sr4", "/api/restore", map[string]string{"image": "test:0", "task": "sr4", "method": "replace"}, nil, 400, "replacement needs a mask"},
		{"deblur without noise", "/api/restore", map[string]string{"image": "test:0", "task": "deblur-gauss"}, nil, 400, "needs measurement noise"},
		{"box too large", "/api/restore", with("box", "16"), nil, 400, "box does not fit"},
		{"NFE 1", "/api/restore", with("nfe", "1"), nil, 400, "nfe \"1\": want a whole number in [2, 1000]"},
		{"NFE huge", "/api/restore", with("nfe", "100000000"), nil, 400, "[2, 1000]"},
		{"NFE not a number", "/api/restore", with("nfe", "ten"), nil, 400, "nfe \"ten\""},
		{"noise NaN", "/api/restore", with("noise", "NaN"), nil, 400, "noise \"NaN\""},
		{"noise negative", "/api/restore", with("noise", "-0.1"), nil, 400, "noise \"-0.1\""},
		{"seed negative", "/api/restore", with("seed", "-1"), nil, 400, "seed \"-1\""},
		{"drop 1", "/api/restore", map[string]string{"image": "test:0", "task": "inpaint-random", "drop": "1"}, nil, 400, "drop probability 1"},
		{"mask empty", "/api/restore", map[string]string{"image": "test:0", "task": "inpaint-mask", "mask": strings.Repeat("0", 256)}, nil, 400, "the mask is empty"},
		{"mask all", "/api/restore", map[string]string{"image": "test:0", "task": "inpaint-mask", "mask": strings.Repeat("1", 256)}, nil, 400, "want at least one known and one missing"},
		{"mask short", "/api/restore", map[string]string{"image": "test:0", "task": "inpaint-mask", "mask": "0101"}, nil, 400, "16×16 = 256 characters"},
		{"mask of other characters", "/api/restore", map[string]string{"image": "test:0", "task": "inpaint-mask", "mask": strings.Repeat("x", 256)}, nil, 400, "256 characters, 1 where"},
		{"no image", "/api/restore", with("image", ""), nil, 400, "no image chosen"},
		{"test image out of range", "/api/restore", with("image", "test:5"), nil, 400, "want a number in [0, 4]"},
		{"unknown upload", "/api/restore", with("image", "upload:0123456789abcdef"), nil, 400, "no upload"},
		{"a path", "/api/restore", with("image", "/etc/passwd"), nil, 400, "want test:N or upload:ID"},
		{"a path as a test image", "/api/restore", with("image", "test:../../etc/passwd"), nil, 400, "want a number"},
		{"sample n 0", "/api/sample", map[string]string{"n": "0"}, nil, 400, "n \"0\": want a whole number in [1, 64]"},
		{"sample n 65", "/api/sample", map[string]string{"n": "65"}, nil, 400, "[1, 64]"},
		{"sample NFE 1", "/api/sample", map[string]string{"nfe": "1"}, nil, 400, "nfe \"1\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.post(t, tc.path, tc.fields, tc.file)
			if r.code != tc.code || !strings.Contains(r.errMsg(), tc.msg) {
				t.Errorf("%d %q; want %d with %q", r.code, r.body, tc.code, tc.msg)
			}
			if strings.Contains(r.errMsg(), "\n") {
				t.Errorf("a message of several lines: %q", r.errMsg())
			}
		})
	}
	for _, tc := range []struct {
		name, path string
		code       int
		msg        string
	}{
		{"unknown path", "/etc/passwd", 404, "no such page"},
		{"unknown job", "/api/job?id=nope", 404, `no job "nope"`},
		{"unknown image", "/api/image?id=nope&name=restored", 404, "no image"},
		{"test image not a number", "/api/test-image?i=x", 400, "want a number in [0, 4]"},
		{"test image negative", "/api/test-image?i=-1", 400, "want a number in [0, 4]"},
		{"unknown upload image", "/api/upload-image?id=../x", 404, "no upload"},
	} {
		if r := ts.get(t, tc.path); r.code != tc.code || !strings.Contains(r.errMsg(), tc.msg) {
			t.Errorf("%s: %d %q; want %d with %q", tc.name, r.code, r.body, tc.code, tc.msg)
		}
	}

	// A POST without the page's header, and a request for another host name (DNS rebinding).
	req, _ := http.NewRequest(http.MethodPost, ts.url+"/api/sample", strings.NewReader("n=2"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if r := ts.do(t, req); r.code != http.StatusForbidden || !strings.Contains(r.errMsg(), Header) {
		t.Errorf("a POST without %s: %d %s", Header, r.code, r.body)
	}
	req, _ = http.NewRequest(http.MethodGet, ts.url+"/", nil)
	req.Host = "attacker.example:80"
	if r := ts.do(t, req); r.code != http.StatusForbidden || !strings.Contains(r.errMsg(), "attacker.example") {
		t.Errorf("Host attacker.example: %d %s", r.code, r.body)
	}

	// Still up, and still restoring.
	if r := ts.get(t, "/"); r.code != http.StatusOK {
		t.Fatalf("the page after bad requests: %d", r.code)
	}
	ts.restoreOK(t, good)
	if strings.Contains(ts.logText(), "panic") {
		t.Errorf("the server logged a panic:\n%s", ts.logText())
	}
}

// TestServeQueueFull: with one job running and serveMaxWaiting waiting, a further restoration is
// answered 503 with a message; a waiting job reports how many run before it; once the queue drains,
// a restoration runs again.
func TestServeQueueFull(t *testing.T) {
	ts := newTestServer(t)
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open) // before the server's cleanup, which waits for the running job
	var ids []string
	for i := range serveMaxWaiting + 1 {
		j := &job{kind: "test", run: func() (*jobResult, error) {
			<-gate
			return &jobResult{Report: "ok"}, nil
		}}
		if err := ts.s.jobs.add(j); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.id)
		for running, _ := ts.s.jobs.load(); i == 0 && !running; running, _ = ts.s.jobs.load() {
			time.Sleep(time.Millisecond)
		}
	}
	good := map[string]string{"image": "test:0", "task": "inpaint-box", "box": "6", "nfe": "4"}
	r := ts.post(t, "/api/restore", good, nil)
	if r.code != http.StatusServiceUnavailable || !strings.Contains(r.errMsg(), "busy") {
		t.Fatalf("a restoration on a full queue: %d %s; want 503 saying the server is busy", r.code, r.body)
	}
	if r := ts.post(t, "/api/sample", map[string]string{"n": "1"}, nil); r.code != http.StatusServiceUnavailable {
		t.Fatalf("sampling on a full queue: %d %s", r.code, r.body)
	}
	if st := ts.get(t, "/api/job?id="+ids[len(ids)-1]).json; st["state"] != jobWaiting || st["ahead"] != float64(serveMaxWaiting) {
		t.Errorf("the last job: %v; want waiting with %d before it", st, serveMaxWaiting)
	}
	open()
	for _, id := range ids {
		if st := ts.waitJob(t, id); st["state"] != jobDone {
			t.Errorf("job %s: %v", id, st)
		}
	}
	ts.restoreOK(t, good)
}

// TestServePanics: a handler that panics is answered 500 with a message and logged with its stack, a
// job that panics fails with a message; the server goes on answering and running jobs.
func TestServePanics(t *testing.T) {
	ts := newTestServer(t)
	h := ts.s.guard(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/x", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "internal error") || !strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("a panicking handler: %d %s", rec.Code, rec.Body)
	}
	j := &job{kind: "test", run: func() (*jobResult, error) { panic("job boom") }}
	if err := ts.s.jobs.add(j); err != nil {
		t.Fatal(err)
	}
	if st := ts.waitJob(t, j.id); st["state"] != jobFailed || !strings.Contains(st["error"].(string), "job boom") {
		t.Errorf("a panicking job: %v", st)
	}
	if l := ts.logText(); !strings.Contains(l, "panic serving GET /x: boom") || !strings.Contains(l, "panic in job") || !strings.Contains(l, "goroutine") {
		t.Errorf("the log does not show both panics with stacks:\n%s", l)
	}
	ts.restoreOK(t, map[string]string{"image": "test:2", "task": "denoise", "noise": "0.2", "nfe": "3"})
}

// TestServeDecodeUpload: an RGB model takes an RGB PNG, plane by plane, and refuses a gray one; a
// gray model takes an RGB PNG whose pixels are all gray.
func TestServeDecodeUpload(t *testing.T) {
	rgb := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	for p := range 6 {
		rgb.Pix[4*p], rgb.Pix[4*p+1], rgb.Pix[4*p+2], rgb.Pix[4*p+3] = uint8(p), uint8(10+p), uint8(20+p), 255
	}
	var b bytes.Buffer
	png.Encode(&b, rgb)
	levels, err := decodeUpload(b.Bytes(), 3, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	for p := range 6 {
		if levels[p] != uint8(p) || levels[6+p] != uint8(10+p) || levels[12+p] != uint8(20+p) {
			t.Fatalf("planes %v: want R, G, B of each pixel in turn", levels)
		}
	}
	if _, err := decodeUpload(b.Bytes(), 1, 2, 3); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("a colour PNG for a gray model: %v", err)
	}
	if _, err := decodeUpload(grayPNG(t, 4, func(x, y int) uint8 { return 1 }), 3, 4, 4); err == nil || !strings.Contains(err.Error(), "RGB (3 channels)") {
		t.Errorf("a gray PNG for an RGB model: %v", err)
	}
	for p := range 6 {
		rgb.Pix[4*p+1], rgb.Pix[4*p+2] = rgb.Pix[4*p], rgb.Pix[4*p]
	}
	b.Reset()
	png.Encode(&b, rgb)
	if levels, err := decodeUpload(b.Bytes(), 1, 2, 3); err != nil || levels[5] != 5 {
		t.Errorf("an RGB PNG of gray pixels for a gray model: %v %v", levels, err)
	}
}

// TestServeAddr: a non-loopback --addr is refused unless --public; malformed ones are refused.
func TestServeAddr(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
		ok     bool
	}{
		{"127.0.0.1:8080", false, true},
		{"127.0.0.2:0", false, true},
		{"[::1]:8080", false, true},
		{"localhost:8080", false, true},
		{"0.0.0.0:8080", false, false},
		{":8080", false, false},
		{"192.168.1.5:8080", false, false},
		{"example.com:80", false, false},
		{"0.0.0.0:8080", true, true},
		{":8080", true, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1:99999", false, false},
		{"127.0.0.1:http", false, false},
	} {
		err := CheckAddr(tc.addr, tc.public)
		if (err == nil) != tc.ok {
			t.Errorf("--addr %s (public %v): %v; want ok %v", tc.addr, tc.public, err, tc.ok)
		}
		if err != nil && !tc.public && strings.Contains(tc.addr, ":8080") && !strings.Contains(err.Error(), "--public") {
			t.Errorf("--addr %s: the refusal %q does not mention --public", tc.addr, err)
		}
	}
	if got := defaultTestSet(&imagedata.Dataset{C: 1, H: 16, W: 16}); got != "" {
		t.Errorf("a 16×16 model's default test set: %q, want none", got)
	}
	_, err := os.Stat(FashionMNIST)
	if got := defaultTestSet(&imagedata.Dataset{C: 1, H: 28, W: 28}); (got != "") != (err == nil) {
		t.Errorf("a 28×28 model's default test set: %q, with %s: %v", got, FashionMNIST, err)
	}
}
