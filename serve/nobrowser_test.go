//go:build !browser

package serve

import "testing"

// TestServeBrowser is the page's end-to-end test in a headless browser, built only with -tags browser
// (serve_browser_test.go): chromedp and the browser stay out of the ordinary suite.
func TestServeBrowser(t *testing.T) {
	t.Skip("the browser test of holdctl serve is built with -tags browser: make test-browser (needs Debian's chromium-headless-shell)")
}
