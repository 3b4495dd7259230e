//go:build browser

package serve

// The page of holdctl serve in a real headless browser (Debian's chromium-headless-shell, driven with
// chromedp): load it, pick a test image, draw a mask with the mouse, restore, see the result and its
// numbers; upload a file that is not a PNG and one of the wrong size and see the messages; upload a
// good one and sample, and see that the page still works. Built with -tags browser (make test-browser),
// which needs the browser: HOLDGO_BROWSER names it, else it is looked for where Debian puts it.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserPath finds the headless browser: $HOLDGO_BROWSER, chromium-headless-shell on the PATH, or
// Debian's /usr/lib/chromium/chromium-headless-shell.
func browserPath() (string, error) {
	if p := os.Getenv("HOLDGO_BROWSER"); p != "" {
		return exec.LookPath(p)
	}
	if p, err := exec.LookPath("chromium-headless-shell"); err == nil {
		return p, nil
	}
	const debian = "/usr/lib/chromium/chromium-headless-shell"
	if _, err := os.Stat(debian); err == nil {
		return debian, nil
	}
	return "", fmt.Errorf("no chromium-headless-shell on the PATH nor at %s", debian)
}

func TestServeBrowser(t *testing.T) {
	bin, err := browserPath()
	if err != nil {
		t.Fatalf("the browser test needs a headless browser: %v; install it (apt-get install chromium-headless-shell) or set HOLDGO_BROWSER", err)
	}
	ts := newTestServer(t)
	dir := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1000, 1400), chromedp.UserDataDir(filepath.Join(dir, "profile")))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	// wait polls a JavaScript condition until it holds (30 s at most); on a timeout it says what the
	// page shows in its error box and status line.
	wait := func(what, cond string) {
		t.Helper()
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			shown, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`"error box: " + document.getElementById("error").textContent +
				"; status: " + document.getElementById("status").textContent + "; image: " + document.getElementById("image-name").textContent`))
			t.Fatalf("%s: %v (%s)", what, err, shown)
		}
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(id string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("`+id+`").textContent`))
		if err != nil {
			t.Fatalf("text of #%s: %v", id, err)
		}
		return s
	}
	start := time.Now()

	// Load the page: it shows test image 0.
	do("load the page", chromedp.Navigate(ts.url+"/"))
	wait("test image 0 on load", `document.getElementById("image-name").textContent === "Test image 0."`)

	// Pick test image 2.
	do("pick test image 2", chromedp.SetValue(chromedp.ID("test-index"), "2"), chromedp.Click(chromedp.ID("load-test")))
	wait("test image 2 shown", `document.getElementById("image-name").textContent === "Test image 2."`)

	// Draw a stroke across the canvas with the mouse: press, move, release.
	rect, err := chromedp.Run(bctx, chromedp.Evaluate[[]float64](`(() => {
		const c = document.getElementById("canvas");
		c.scrollIntoView();
		const r = c.getBoundingClientRect();
		return [r.left, r.top, r.width, r.height];
	})()`))
	if err != nil || len(rect) != 4 || !(rect[2] > 0 && rect[3] > 0) {
		t.Fatalf("the canvas's rectangle: %v %v", rect, err)
	}
	at := func(fx, fy float64) (float64, float64) { return rect[0] + fx*rect[2], rect[1] + fy*rect[3] }
	x, y := at(0.3, 0.4)
	steps := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(chromedp.MousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1))}
	for i := 1; i <= 8; i++ {
		x, y = at(0.3+0.05*float64(i), 0.4+0.02*float64(i))
		steps = append(steps, chromedp.MouseEvent(chromedp.MouseMoved, x, y, chromedp.ButtonLeft))
	}
	steps = append(steps, chromedp.MouseEvent(chromedp.MouseReleased, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	do("draw on the canvas", steps...)
	wait("the mask drawn and its task chosen", `document.getElementById("mask-count").textContent !== "0 pixels marked." &&
		document.getElementById("task").value === "inpaint-mask"`)
	marked := text("mask-count")

	// Restore with a small NFE and wait for the result and its numbers.
	do("restore", chromedp.SetValue(chromedp.ID("nfe"), "4"), chromedp.Click(chromedp.ID("restore")))
	wait("the restoration shown", `(() => {
		const img = document.getElementById("img-restored");
		return !document.getElementById("result").hidden && img !== null && img.complete && img.naturalWidth === 16;
	})()`)
	numbers := text("numbers")
	for _, want := range []string{"PSNR", "SSIM", "RMS(Ax − y)", "inpaint-mask", "ddnm"} {
		if !strings.Contains(numbers, want) {
			t.Errorf("the numbers %q do not show %s", numbers, want)
		}
	}
	href, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("download").href`))
	if err != nil || !strings.Contains(href, "name=restored") || !strings.Contains(href, "download=1") {
		t.Errorf("download link %q (%v)", href, err)
	}
	if e := text("error"); e != "" {
		t.Errorf("the error box shows %q after a restoration", e)
	}

	// Upload a file that is not a PNG, then a PNG of the wrong size: each refused on the page.
	notPNG := filepath.Join(dir, "notes.png")
	big := filepath.Join(dir, "big.png")
	good := filepath.Join(dir, "good.png")
	if err := os.WriteFile(notPNG, []byte("this is text, not a PNG"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, grayPNG(t, 28, func(x, y int) uint8 { return uint8(x * y) }), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, grayPNG(t, serveSide, func(x, y int) uint8 { return uint8(16*x + y) }), 0o644); err != nil {
		t.Fatal(err)
	}
	do("upload a text file", chromedp.SetUploadFiles(chromedp.ID("upload"), []string{notPNG}))
	wait("the refusal of a text file shown", `(() => {
		const e = document.getElementById("error");
		return !e.hidden && e.textContent.includes("notes.png") && e.textContent.includes("not a PNG");
	})()`)
	do("upload a 28×28 PNG", chromedp.SetUploadFiles(chromedp.ID("upload"), []string{big}))
	wait("the refusal of a 28×28 PNG shown", `document.getElementById("error").textContent.includes("the model takes 16×16")`)
	if name := text("image-name"); name != "Test image 2." {
		t.Errorf("after refused uploads the page shows %q, want test image 2 still", name)
	}

	// The page still works: a good upload, then sampling.
	do("upload a good PNG", chromedp.SetUploadFiles(chromedp.ID("upload"), []string{good}))
	wait("the upload shown", `document.getElementById("image-name").textContent === "Uploaded good.png." && document.getElementById("error").hidden`)
	do("sample", chromedp.SetValue(chromedp.ID("sample-n"), "4"), chromedp.SetValue(chromedp.ID("sample-nfe"), "4"),
		chromedp.Click(chromedp.ID("sample")))
	wait("the sample grid shown", `(() => {
		const img = document.getElementById("img-grid");
		return !document.getElementById("result").hidden && img !== null && img.complete && img.naturalWidth > 0;
	})()`)
	if e := text("error"); e != "" {
		t.Errorf("the error box shows %q after sampling", e)
	}
	t.Logf("browser test: %s, %s drawn, restored, two uploads refused, one taken, sampled; %.1fs", bin, marked, time.Since(start).Seconds())
}
