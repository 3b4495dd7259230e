package main

// The command holdctl serve, started as the binary, on a tiny model (ncsnpp-tiny, one training step
// on 16×16 IDX images). The page's handlers are tested in package serve.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"holdgo/serve"
)

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

// trainTinyImages trains ncsnpp-tiny for one step on n side×side IDX images written to dir (train
// and, with tests > 0, t10k images) and returns the run directory.
func trainTinyImages(t *testing.T, dir string, n, tests, side int) string {
	t.Helper()
	writeIDXSide(t, dir, "train", n, side)
	if tests > 0 {
		writeIDXSide(t, dir, "t10k", tests, side)
	}
	run := filepath.Join(dir, "run")
	if out, err := runSub(t, trainCommand(), "--data", "mnist:"+dir, "--model", "ncsnpp-tiny", "--steps", "1", "--batch", "2",
		"--threads", "1", "--out", run); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	return run
}

// serveJSON sends req and decodes its JSON answer, failing unless its status is code.
func serveJSON(t *testing.T, req *http.Request, code int) map[string]any {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if resp.StatusCode != code || json.Unmarshal(body, &v) != nil {
		t.Fatalf("%s %s: %d %s; want %d with JSON", req.Method, req.URL, resp.StatusCode, body, code)
	}
	return v
}

// TestServeCommand: holdctl serve refuses a public address without --public, a model of images under
// 11×11 and a test set of another shape, each with exit 2 and one line; started on port 0 it prints its
// address, serves the page and restores.
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	run := trainTinyImages(t, dir, 8, 5, 16)
	small := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(small, 0o755); err != nil {
		t.Fatal(err)
	}
	smallRun := trainTinyImages(t, small, 4, 0, 8)
	for name, args := range map[string][]string{
		"public address":   {"--ckpt", run, "--addr", "0.0.0.0:0"},
		"no checkpoint":    {"--addr", "127.0.0.1:0"},
		"8×8 model":        {"--ckpt", smallRun, "--addr", "127.0.0.1:0"},
		"test set's shape": {"--ckpt", run, "--in", "mnist:" + small, "--addr", "127.0.0.1:0"},
		"--in a path":      {"--ckpt", run, "--in", "/etc/passwd", "--addr", "127.0.0.1:0"},
		"stray argument":   {"--ckpt", run, "--addr", "127.0.0.1:0", "extra"},
	} {
		r := holdctl(t, append([]string{"serve"}, args...)...)
		msg := strings.TrimSpace(r.stderr)
		if r.code != 2 || !strings.HasPrefix(msg, "holdctl") || strings.Contains(msg, "\n") {
			t.Errorf("%s: want exit 2 and one line; got %s", name, r)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, holdctlBin, "serve", "--ckpt", run, "--in", "mnist:"+dir+"#test", "--addr", "127.0.0.1:0", "--threads", "1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no start-up line: %v; stderr %s", err, stderr.String())
	}
	i := strings.Index(line, "http://")
	if i < 0 || !strings.Contains(line, "test images mnist:") {
		t.Fatalf("start-up line %q: want the test images and the address", line)
	}
	base := strings.TrimSuffix(strings.Fields(line[i:])[0], "/")
	if resp, err := http.Get(base + "/"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// sr4 of test image 3 at NFE 3, queued and followed to the end.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{"image": "test:3", "task": "sr4", "nfe": "3"} {
		mw.WriteField(k, v)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/restore", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set(serve.Header, "test")
	id := serveJSON(t, req, http.StatusAccepted)["id"].(string)
	var st map[string]any
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/job?id="+id, nil)
		if st = serveJSON(t, req, http.StatusOK); st["state"] == "done" || st["state"] == "failed" {
			break
		}
	}
	rep, _ := st["report"].(map[string]any)
	if st["state"] != "done" || !(rep["psnr"].(float64) > 0) || math.IsNaN(rep["ssim"].(float64)) {
		t.Errorf("sr4 through the command: %v", st)
	}
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the command test ran out of time")
	}
}
