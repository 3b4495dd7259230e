// Package layout holds the tests that keep the repository describing itself: README.md's Layout table
// lists every package of the tree and nothing else, and every link into a document (docs/<name>.md#<anchor> in
// Go comments and Markdown, [text](<name>.md#<anchor>) in Markdown) names a file and a heading that exist.
// They read the working tree only; nothing is built.
package layout

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root returns the repository root (the directory of go.mod, two levels up).
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return dir
}

// skipDir reports whether a directory of the walk holds no packages of the module: hidden directories,
// testdata, build outputs, nested modules.
func skipDir(rootDir, path string, name string) bool {
	if path == rootDir {
		return false
	}
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" {
		return true
	}
	switch filepath.ToSlash(strings.TrimPrefix(path, rootDir+string(filepath.Separator))) {
	case "bin", "out", "runs", "demo-out":
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// packages returns the directories (relative, slash-separated) that hold .go files: every package of
// the module whatever its build tags, test-only packages included. The root itself holds none.
func packages(t *testing.T, rootDir string) []string {
	t.Helper()
	set := map[string]bool{}
	err := filepath.WalkDir(rootDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(rootDir, path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".go") {
			rel, err := filepath.Rel(rootDir, filepath.Dir(path))
			if err != nil {
				return err
			}
			set[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// layoutTable returns the package names in the first column of the table under README.md's
// "## Layout" heading.
func layoutTable(t *testing.T, rootDir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(rootDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line) == "## Layout"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal(`README.md has no "## Layout" table with package names in backquotes`)
	}
	return names
}

// TestReadmeLayout: README.md's Layout table names every package directory once, and only those.
func TestReadmeLayout(t *testing.T) {
	dir := root(t)
	pkgs := packages(t, dir)
	if len(pkgs) < 10 || !slices.Contains(pkgs, "hold") || !slices.Contains(pkgs, "internal/layout") {
		t.Fatalf("the walk found %d packages (%v): not the repository", len(pkgs), pkgs)
	}
	listed := map[string]int{}
	for _, n := range layoutTable(t, dir) {
		listed[n]++
	}
	for _, p := range pkgs {
		switch listed[p] {
		case 0:
			t.Errorf("package %s is missing from README.md's Layout table: add a row | `%s` | what it holds |", p, p)
		case 1:
		default:
			t.Errorf("package %s is listed %d times in README.md's Layout table", p, listed[p])
		}
	}
	for n := range listed {
		if !slices.Contains(pkgs, n) {
			t.Errorf("README.md's Layout table lists %s, which is no package directory of the repository", n)
		}
	}
}

// slug is the anchor GitHub gives a Markdown heading: lower case, every character that is not a letter,
// mark, number, space, hyphen or underscore dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown file (outside fenced code blocks), with GitHub's
// -1, -2, … suffixes for repeated headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.Trim(strings.TrimLeft(line, "#"), " #"))
		s := slug(h)
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

var (
	// docs/<name>.md#<anchor>, as Go comments and prose cite a document (relative to the root).
	docRef = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md)#([A-Za-z0-9_-]+)`)
	// [text](path#anchor) in Markdown (relative to the file; an empty path is the file itself).
	mdLink = regexp.MustCompile(`\]\(([^()\s#]*)#([^()\s]+)\)`)
)

// TestDocAnchors: every docs/<name>.md#<anchor> in a Go file, README.md or docs/*.md, and every Markdown link
// with an anchor in README.md or docs/*.md, points at an existing file and heading.
func TestDocAnchors(t *testing.T) {
	dir := root(t)
	cache := map[string]map[string]bool{}
	check := func(from, target, anchor string) {
		if _, ok := cache[target]; !ok {
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: cites %s, which does not exist", from, target)
				cache[target] = nil
				return
			}
			cache[target] = anchors(t, target)
		}
		if a := cache[target]; a != nil && !a[anchor] {
			rel, _ := filepath.Rel(dir, target)
			t.Errorf("%s: cites %s#%s, but %s has no heading with that anchor", from, filepath.ToSlash(rel), anchor, filepath.ToSlash(rel))
		}
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(dir, path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, dir+string(filepath.Separator)))
		if strings.HasSuffix(rel, ".go") || rel == "README.md" || (strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, path := range files {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		from := filepath.ToSlash(rel)
		for _, m := range docRef.FindAllStringSubmatch(string(text), -1) {
			check(from, filepath.Join(dir, "docs", m[1]), m[2])
			links++
		}
		if strings.HasSuffix(path, ".md") {
			for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
				target := path
				if m[1] != "" {
					if strings.Contains(m[1], "://") || !strings.HasSuffix(m[1], ".md") {
						continue
					}
					target = filepath.Join(filepath.Dir(path), filepath.FromSlash(m[1]))
				}
				check(from, target, m[2])
				links++
			}
		}
	}
	if links < 20 {
		t.Errorf("found only %d links into documents: is the pattern still right?", links)
	}
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"The SDE family":                     "the-sde-family",
		"HOLD-3 closed form":                 "hold-3-closed-form",
		"The paper's A-operator":             "the-papers-a-operator",
		"CLD, VP and VE":                     "cld-vp-and-ve",
		"The x̂₀ samplers (`sample.XHat`)":   "the-x̂₀-samplers-samplexhat",
		"Euler-Maruyama and ODE steppers":    "euler-maruyama-and-ode-steppers",
		"Fusion on the hot path (issue 16)":  "fusion-on-the-hot-path-issue-16",
		"1-D mixture, exact score: 20,000 x": "1-d-mixture-exact-score-20000-x",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
