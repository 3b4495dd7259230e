package serve

// holdctl serve's HTTP side: the page, the images, uploads, and the requests that queue jobs. Every
// answer of the API is JSON ({"error": "…"} with a status ≥ 400) or a PNG; every request body is at
// most serveMaxBody bytes; a handler that panics is answered 500 and logged, and the server goes on.

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"holdgo/imagedata"
	"holdgo/restore"
	"holdgo/sample"
	"holdgo/train"
)

//go:embed page/index.html page/page.js page/page.css
var servePage embed.FS

// Header must be on every POST: the page's script sets it, a form of another site cannot
// (a cross-site request with it needs a CORS preflight, which serve never grants).
const Header = "X-Holdctl"

// The page's tasks (inpaint-mask: the mask drawn on the image) and methods ("": the task's default).
var (
	serveTasks = []string{restore.TaskInpaintMask, restore.TaskInpaintBox, restore.TaskInpaintRandom, restore.TaskSR2,
		restore.TaskSR4, restore.TaskDeblur, restore.TaskDenoise}
	serveMethods = []string{restore.MethodDDNM, restore.MethodReplace, restore.MethodRepaint, restore.MethodPiGDM, restore.MethodDPS}
)

// Server is holdctl serve's state: the model, loaded once, the test images, and the jobs.
type Server struct {
	ckpt            string
	model           *train.Model
	shape           *imagedata.Dataset // the model's C×H×W
	test            *imagedata.Dataset // nil: uploads only
	testSpec        string
	public          bool
	log             *log.Logger
	version         string
	restoreDefaults restore.Params
	sampleSpec      sample.Spec
	page            *template.Template
	jobs            *jobQueue
	uploads         *uploadStore
}

func parsePage() (*template.Template, error) {
	return template.ParseFS(servePage, "page/index.html")
}

// Close stops the job queue: the running job ends at its next network evaluation.
func (s *Server) Close() { s.jobs.close() }

// handler is the server's whole HTTP handler.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handlePage)
	mux.HandleFunc("GET /static/page.js", staticFile("page/page.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /static/page.css", staticFile("page/page.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /api/test-image", s.handleTestImage)
	mux.HandleFunc("POST /api/upload", s.handleUpload)
	mux.HandleFunc("GET /api/upload-image", s.handleUploadImage)
	mux.HandleFunc("POST /api/restore", s.handleRestore)
	mux.HandleFunc("POST /api/sample", s.handleSample)
	mux.HandleFunc("GET /api/job", s.handleJob)
	mux.HandleFunc("GET /api/image", s.handleImage)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such page: %s %s", r.Method, r.URL.Path)
	})
	return s.guard(mux)
}

// guard wraps every request: a panic becomes a 500 answer and a log entry with its stack; the Host
// must be a loopback name unless --public (a page of another site that rebinds its name to 127.0.0.1
// reaches nothing); a POST must carry Header; a body is cut at serveMaxBody bytes.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v) // net/http's own signal to drop the connection; it recovers it
				}
				s.log.Printf("panic serving %s %s: %v\n%s", r.Method, r.URL.Path, v, debug.Stack())
				writeError(w, http.StatusInternalServerError, "internal error (a bug, not your input): %v; the server is still up", v)
			}
		}()
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		if !s.public && !loopbackHost(r.Host) {
			writeError(w, http.StatusForbidden, "host %q: this server answers 127.0.0.1, [::1] and localhost only (holdctl serve --public serves other names)", r.Host)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, serveMaxBody)
		if r.Method == http.MethodPost && r.Header.Get(Header) == "" {
			writeError(w, http.StatusForbidden, "a POST must come from the page (header %s missing)", Header)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine: localhost or a loopback address.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// writeError answers {"error": message}, the message on one line.
func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "; ")
	writeJSON(w, code, struct {
		Error string `json:"error"`
	}{msg})
}

// pageMessage is an error of restore's or sample's code as the page shows it (without "holdctl: ").
func pageMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "holdctl: ")
}

func staticFile(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := servePage.ReadFile(name)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "%v", err)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Write(b)
	}
}

func writePNG(w http.ResponseWriter, b []byte, download string) {
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	if download != "" {
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", download))
	}
	w.Write(b)
}

// pageData is what the page's template shows and hands to its script.
type pageData struct {
	Ckpt, SDE                                string
	C, H, W                                  int
	TestSpec                                 string
	TestCount, TestMax                       int
	Tasks, Methods                           []string
	NFE, SampleNFE, MaxNFE, MaxSamples, Box  int
	Drop, MaxNoise                           float64
	MaxUploadKiB, MaxWaiting                 int
	DefaultMethod, DefaultSampler, TestsNote string
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	d := s.restoreDefaults
	box := d.Task.Box
	if box >= s.shape.H || box >= s.shape.W {
		box = min(s.shape.H, s.shape.W) / 2
	}
	data := pageData{Ckpt: s.ckpt, SDE: s.model.Config.SDE, C: s.shape.C, H: s.shape.H, W: s.shape.W,
		TestSpec: s.testSpec, Tasks: serveTasks, Methods: serveMethods, NFE: d.NFE, SampleNFE: s.sampleSpec.NFE,
		MaxNFE: serveMaxNFE, MaxSamples: serveMaxSamples, Box: box, Drop: d.Task.Drop, MaxNoise: serveMaxNoise,
		MaxUploadKiB: serveMaxBody >> 10, MaxWaiting: serveMaxWaiting,
		DefaultMethod:  restore.MethodDDNM + " (denoise: the exact start at σ = σ_y)",
		DefaultSampler: fmt.Sprintf("%s on the %s grid", s.sampleSpec.Method, s.sampleSpec.Grid)}
	if s.test != nil {
		data.TestCount, data.TestMax = s.test.Len(), s.test.Len()-1
	}
	var b bytes.Buffer
	if err := s.page.Execute(&b, data); err != nil {
		writeError(w, http.StatusInternalServerError, "the page: %v", err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// handleTestImage answers test image ?i= as a PNG of the model's size.
func (s *Server) handleTestImage(w http.ResponseWriter, r *http.Request) {
	if s.test == nil {
		writeError(w, http.StatusNotFound, "no test images: serve was started without --in (and %s is not there); upload a PNG", FashionMNIST)
		return
	}
	i, err := strconv.Atoi(r.URL.Query().Get("i"))
	if err != nil || i < 0 || i >= s.test.Len() {
		writeError(w, http.StatusBadRequest, "test image %q: want a number in [0, %d]", r.URL.Query().Get("i"), s.test.Len()-1)
		return
	}
	b, err := levelsPNG(s.test.Pixels(i), s.shape.C, s.shape.H, s.shape.W)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writePNG(w, b, "")
}

// parseForm reads a POST's fields (multipart, as the page sends them, or URL-encoded) and says
// what was wrong in the status and message of the answer.
func parseForm(w http.ResponseWriter, r *http.Request) bool {
	err := r.ParseMultipartForm(serveMaxBody)
	if errors.Is(err, http.ErrNotMultipart) {
		err = r.ParseForm()
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "the request is larger than %d KiB, the limit of this server: upload a PNG of %d KiB at most", serveMaxBody>>10, serveMaxBody>>10)
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, "unreadable request: %v", err)
		return false
	}
	return true
}

// handleUpload takes one PNG (field "image") of the model's size and channels, keeps it, and answers
// its id.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	if r.MultipartForm != nil {
		defer r.MultipartForm.RemoveAll()
	}
	if r.MultipartForm == nil || len(r.MultipartForm.File["image"]) != 1 {
		writeError(w, http.StatusBadRequest, "no image in the upload: send one PNG file as the field \"image\"")
		return
	}
	f, err := r.MultipartForm.File["image"][0].Open()
	if err != nil {
		writeError(w, http.StatusBadRequest, "the upload: %v", err)
		return
	}
	var b bytes.Buffer
	_, err = b.ReadFrom(f)
	f.Close()
	if err != nil {
		writeError(w, http.StatusBadRequest, "the upload: %v", err)
		return
	}
	levels, err := decodeUpload(b.Bytes(), s.shape.C, s.shape.H, s.shape.W)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	id := s.uploads.add(levels)
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "width": s.shape.W, "height": s.shape.H})
}

// handleUploadImage answers upload ?id= as the PNG the model sees.
func (s *Server) handleUploadImage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	levels, ok := s.uploads.get(id)
	if !ok {
		writeError(w, http.StatusNotFound, "no upload %q: the server keeps the last %d; upload it again", id, serveKeepUpload)
		return
	}
	b, err := levelsPNG(levels, s.shape.C, s.shape.H, s.shape.W)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writePNG(w, b, "")
}

// pngMagic starts every PNG file.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// decodeUpload reads a PNG of w×h pixels as c planes of 8-bit levels (as imagedata reads an image
// folder), refusing another file type, another size (before decoding the pixels), a gray image for an
// RGB model, colour for a gray one, and transparency.
func decodeUpload(b []byte, c, h, w int) ([]uint8, error) {
	want := fmt.Sprintf("a PNG of %d×%d pixels, %s", w, h, map[int]string{1: "gray (1 channel)", 3: "RGB (3 channels)"}[c])
	if !bytes.HasPrefix(b, pngMagic) {
		kind := http.DetectContentType(b)
		if len(b) == 0 {
			kind = "an empty file"
		}
		return nil, fmt.Errorf("not a PNG file (%s): the model takes %s", kind, want)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("a broken PNG file (%v): the model takes %s", err, want)
	}
	if cfg.Width != w || cfg.Height != h {
		return nil, fmt.Errorf("the PNG is %d×%d pixels; the model takes %d×%d: crop or scale it to %d×%d first", cfg.Width, cfg.Height, w, h, w, h)
	}
	gray := cfg.ColorModel == color.GrayModel || cfg.ColorModel == color.Gray16Model
	if c == 3 && gray {
		return nil, fmt.Errorf("the PNG is gray (1 channel); the model takes %s", want)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("a broken PNG file (%v): the model takes %s", err, want)
	}
	levels := make([]uint8, c*h*w)
	bounds := img.Bounds()
	for y := range h {
		for x := range w {
			px := img.At(bounds.Min.X+x, bounds.Min.Y+y)
			r, g, bl, a := px.RGBA()
			if a != 0xffff {
				return nil, fmt.Errorf("the PNG has transparent pixels (the first at x %d, y %d): the model takes %s without transparency", x, y, want)
			}
			if c == 1 {
				if !gray && (r != g || g != bl) {
					return nil, fmt.Errorf("the PNG has colour (pixel x %d, y %d is not gray): the model takes %s; save it as grayscale", x, y, want)
				}
				levels[y*w+x] = color.GrayModel.Convert(px).(color.Gray).Y
				continue
			}
			levels[y*w+x], levels[h*w+y*w+x], levels[2*h*w+y*w+x] = uint8(r>>8), uint8(g>>8), uint8(bl>>8)
		}
	}
	return levels, nil
}

// levelsPNG encodes one image of c planes of 8-bit levels (c 1 or 3) as a PNG.
func levelsPNG(levels []uint8, c, h, w int) ([]byte, error) {
	var img image.Image
	if c == 1 {
		g := image.NewGray(image.Rect(0, 0, w, h))
		copy(g.Pix, levels[:h*w])
		img = g
	} else {
		rgba := image.NewRGBA(image.Rect(0, 0, w, h))
		for p := range h * w {
			copy(rgba.Pix[4*p:], []uint8{levels[p], levels[h*w+p], levels[2*h*w+p], 255})
		}
		img = rgba
	}
	var b bytes.Buffer
	err := png.Encode(&b, img)
	return b.Bytes(), err
}

// valuesPNG encodes one image of values in [−1, 1] (clipped; NaN black) as a PNG of 8-bit levels,
// round((v + 1)/2·255), the inverse of the data's scaling.
func valuesPNG(x []float64, c, h, w int) ([]byte, error) {
	levels := make([]uint8, c*h*w)
	for j, v := range x[:c*h*w] {
		f := (v + 1) / 2 * 255
		if !math.IsNaN(f) {
			levels[j] = uint8(math.Round(math.Min(255, math.Max(0, f))))
		}
	}
	return levelsPNG(levels, c, h, w)
}

// scaleLevels maps 8-bit levels to the model's [−1, 1] as training does (imagedata.Dataset.Scale).
func (s *Server) scaleLevels(levels []uint8) []float32 {
	one := &imagedata.Dataset{N: 1, C: s.shape.C, H: s.shape.H, W: s.shape.W}
	x := make([]float32, len(levels))
	one.Scale(x, levels, false, nil)
	return x
}

// uploadStore keeps the last few uploaded images (8-bit levels) by id.
type uploadStore struct {
	mu    sync.Mutex
	max   int
	order []string
	byID  map[string][]uint8
}

func newUploadStore(max int) *uploadStore {
	return &uploadStore{max: max, byID: map[string][]uint8{}}
}

func (u *uploadStore) add(levels []uint8) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	id := newID()
	u.byID[id] = levels
	u.order = append(u.order, id)
	for len(u.order) > u.max {
		delete(u.byID, u.order[0])
		u.order = u.order[1:]
	}
	return id
}

func (u *uploadStore) get(id string) ([]uint8, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	l, ok := u.byID[id]
	return l, ok
}

// formInt reads an integer field in [lo, hi] (def when absent).
func formInt(f url.Values, name string, def, lo, hi int) (int, error) {
	v := strings.TrimSpace(f.Get(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s %q: want a whole number in [%d, %d]", name, v, lo, hi)
	}
	return n, nil
}

// formFloat reads a finite number field in [lo, hi] (def when absent).
func formFloat(f url.Values, name string, def, lo, hi float64) (float64, error) {
	v := strings.TrimSpace(f.Get(name))
	if v == "" {
		return def, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || !(x >= lo && x <= hi) {
		return 0, fmt.Errorf("%s %q: want a number in [%g, %g]", name, v, lo, hi)
	}
	return x, nil
}

// formSeed reads the seed field (def when absent).
func formSeed(f url.Values, def uint64) (uint64, error) {
	v := strings.TrimSpace(f.Get("seed"))
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("seed %q: want a whole number in [0, 2⁶⁴ − 1]", v)
	}
	return n, nil
}

// pageImage is the image a restoration starts from: a test image or an upload.
type pageImage struct {
	x     []float32 // [−1, 1]
	index int       // the index that keys its randomness (the test image's; 0 for an upload)
	what  string    // for the report's "in"
}

// sourceImage reads the field "image": test:N or upload:ID (never a path).
func (s *Server) sourceImage(v string) (pageImage, error) {
	kind, arg, _ := strings.Cut(v, ":")
	switch kind {
	case "test":
		if s.test == nil {
			return pageImage{}, fmt.Errorf("no test images on this server (started without --in): upload a PNG")
		}
		i, err := strconv.Atoi(arg)
		if err != nil || i < 0 || i >= s.test.Len() {
			return pageImage{}, fmt.Errorf("test image %q: want a number in [0, %d]", arg, s.test.Len()-1)
		}
		return pageImage{x: s.scaleLevels(s.test.Pixels(i)), index: i, what: fmt.Sprintf("%s, image %d", s.testSpec, i)}, nil
	case "upload":
		levels, ok := s.uploads.get(arg)
		if !ok {
			return pageImage{}, fmt.Errorf("no upload %q: the server keeps the last %d; upload it again", arg, serveKeepUpload)
		}
		return pageImage{x: s.scaleLevels(levels), what: "upload " + arg}, nil
	case "":
		return pageImage{}, fmt.Errorf("no image chosen: pick a test image or upload a PNG first")
	}
	return pageImage{}, fmt.Errorf("image %q: want test:N or upload:ID", v)
}

// restoreRequest turns the page's fields into restore's settings: restore's defaults with the task,
// its box, drop and mask, σ_y, the method, the NFE and the seed of the page.
func (s *Server) restoreRequest(f url.Values) (restore.Params, error) {
	p := s.restoreDefaults
	p.Task.Name = f.Get("task")
	if !slices.Contains(serveTasks, p.Task.Name) {
		return p, fmt.Errorf("unknown task %q: want one of %s", p.Task.Name, strings.Join(serveTasks, ", "))
	}
	if m := f.Get("method"); m != "" && !slices.Contains(serveMethods, m) {
		return p, fmt.Errorf("unknown method %q: want one of %s (or leave it empty for the task's default)", m, strings.Join(serveMethods, ", "))
	}
	p.Method = f.Get("method")
	var err error
	if p.Task.Noise, err = formFloat(f, "noise", 0, 0, serveMaxNoise); err != nil {
		return p, err
	}
	if p.Task.Box, err = formInt(f, "box", p.Task.Box, 1, imagedata.MaxSide); err != nil {
		return p, err
	}
	if p.Task.Drop, err = formFloat(f, "drop", p.Task.Drop, 0, 1); err != nil {
		return p, err
	}
	if p.NFE, err = formInt(f, "nfe", p.NFE, 2, serveMaxNFE); err != nil {
		return p, err
	}
	if p.Seed, err = formSeed(f, p.Seed); err != nil {
		return p, err
	}
	if p.Task.Name == restore.TaskInpaintMask {
		mask := f.Get("mask")
		n := s.shape.H * s.shape.W
		if len(mask) != n || strings.Trim(mask, "01") != "" {
			return p, fmt.Errorf("mask: want %d×%d = %d characters, 1 where the image is missing and 0 where known, got %d characters", s.shape.H, s.shape.W, n, len(mask))
		}
		if !strings.Contains(mask, "1") {
			return p, fmt.Errorf("the mask is empty: draw the region to fill on the image (or pick another task)")
		}
		p.Task.Mask = make([]bool, n)
		for j := range n {
			p.Task.Mask[j] = mask[j] == '0'
		}
	}
	return p, nil
}

// jobModel is the model for one job: its scorer is a fork of the model's (the same weights, its own
// tape and buffers; sample.Forker), so that a request never touches the scorer of a running job, and
// restore's settings of its passes (restore.Prepare) stay with the job.
func (s *Server) jobModel() *train.Model {
	m := *s.model
	if f, ok := m.Score.(sample.Forker); ok {
		m.Score = f.Fork()
	}
	return &m
}

// handleRestore checks a restoration (restore.Prepare: the same refusals as the command) and
// queues it.
func (s *Server) handleRestore(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	p, err := s.restoreRequest(r.PostForm)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	src, err := s.sourceImage(r.PostForm.Get("image"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	p.In, p.First = src.what, src.index
	j := &job{kind: "restore"}
	m := s.jobModel()
	run, err := restore.Prepare(p, m) // sets the passes of m's own scorer as for holdctl restore
	if err != nil {
		writeError(w, http.StatusBadRequest, "%s", pageMessage(err))
		return
	}
	m.Score = counting(s.jobs.ctx, m.Score, &j.evals) // run.Model is m
	if err := run.SetImages(src.x, src.index); err != nil {
		writeError(w, http.StatusBadRequest, "%s", pageMessage(err))
		return
	}
	j.total = p.NFE // forward passes; ΠGDM and DPS add vector–Jacobian products
	switch run.Method.Name {
	case restore.MethodPiGDM:
		j.total += len(run.Grid) // one a step and one at the read-out
	case restore.MethodDPS:
		j.total += len(run.Grid) - 1 // one a step
	}
	j.run = func() (*jobResult, error) { return s.restoreJob(run) }
	s.queue(w, j)
}

// restoreJob restores the one image of run and measures it (restore's report).
func (s *Server) restoreJob(run *restore.Job) (*jobResult, error) {
	start := time.Now()
	out, stats, err := run.Restore()
	if err != nil {
		return nil, errors.New(pageMessage(err))
	}
	rep, err := run.Measure(s.log.Writer(), out, stats, nil)
	if err != nil {
		return nil, errors.New(pageMessage(err))
	}
	rep.HoldctlVersion = s.version
	rep.WallSeconds = time.Since(start).Seconds()
	t := run.Task
	d := t.Dim()
	degraded := run.Degraded(0)
	res := &jobResult{Report: rep, Images: []string{"degraded", "restored", "truth"}, PNG: map[string][]byte{}}
	for name, x := range map[string][]float64{"degraded": degraded, "restored": out[:d], "truth": run.Truth[0]} {
		if res.PNG[name], err = valuesPNG(x, t.C, t.H, t.W); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// sampleReport is what the page shows of a sampling run.
type sampleReport struct {
	N           int     `json:"n"`
	Seed        uint64  `json:"seed"`
	Sampler     string  `json:"sampler"`
	Grid        string  `json:"grid"`
	NFE         int     `json:"nfe"`
	Clip        float64 `json:"clip"`
	Denoise     bool    `json:"denoise"`
	Diverged    int     `json:"diverged"`
	WallSeconds float64 `json:"wall_s"`
}

// handleSample queues plain sampling of n images with holdctl sample's image sampler at the page's NFE.
func (s *Server) handleSample(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	f := r.PostForm
	spec := s.sampleSpec
	n, err := formInt(f, "n", 16, 1, serveMaxSamples)
	if err == nil {
		spec.NFE, err = formInt(f, "nfe", spec.NFE, 2, serveMaxNFE)
	}
	var seed uint64
	if err == nil {
		seed, err = formSeed(f, 0)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	spec.NFESet = true
	j := &job{kind: "sample", total: spec.NFE}
	dim, blocks := s.shape.Dimension(), s.model.SDE.Blocks()
	smp, err := spec.Build(s.model.SDE, counting(s.jobs.ctx, s.jobModel().Score, &j.evals), dim)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	j.run = func() (*jobResult, error) {
		start := time.Now()
		res, err := smp.Sample(n, seed)
		if err != nil {
			return nil, err
		}
		q := sample.FirstBlock(res.X, n, blocks, dim)
		cols := int(math.Ceil(math.Sqrt(float64(n))))
		scale := 1
		if s.shape.H <= 32 {
			scale = 2
		}
		img, err := imagedata.GridImage(q, n, s.shape.C, s.shape.H, s.shape.W, cols, scale)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			return nil, err
		}
		rep := sampleReport{N: n, Seed: seed, Sampler: spec.Method, Grid: spec.Grid, NFE: res.NFE, Clip: spec.Clip,
			Denoise: spec.Denoise, Diverged: res.Diverged, WallSeconds: time.Since(start).Seconds()}
		return &jobResult{Report: rep, Images: []string{"grid"}, PNG: map[string][]byte{"grid": b.Bytes()}}, nil
	}
	s.queue(w, j)
}

// queue adds j and answers its id (202), or 503 when the queue is full.
func (s *Server) queue(w http.ResponseWriter, j *job) {
	err := s.jobs.add(j)
	switch {
	case errors.Is(err, errBusy):
		writeError(w, http.StatusServiceUnavailable, "the server is busy: one job runs and %d wait, the most it keeps; try again when one has finished", serveMaxWaiting)
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "%v", err)
	default:
		writeJSON(w, http.StatusAccepted, map[string]string{"id": j.id})
	}
}

// handleJob answers job ?id='s status, with its numbers once done.
func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	st, ok := s.jobs.status(id)
	if !ok {
		writeError(w, http.StatusNotFound, "no job %q: the server keeps the last %d finished jobs", id, serveKeepJobs)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// handleImage answers image ?name= of job ?id= as a PNG, as a download with ?download=1.
func (s *Server) handleImage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, name := q.Get("id"), q.Get("name")
	b, ok := s.jobs.image(id, name)
	if !ok {
		writeError(w, http.StatusNotFound, "no image %q of job %q (a job shows its images once done; the server keeps the last %d)", name, id, serveKeepJobs)
		return
	}
	download := ""
	if q.Get("download") == "1" {
		download = fmt.Sprintf("holdctl-%s-%s.png", name, id)
	}
	writePNG(w, b, download)
}
