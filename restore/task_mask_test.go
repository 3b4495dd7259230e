package restore

import (
	"slices"
	"strings"
	"testing"
)

// TestInpaintMask: a mask of H·W values measures its known pixels in every channel, one of C·H·W
// values exactly the values it marks known; A selects them (y = the known pixels, A⁺y puts them back
// with zeros elsewhere); Check refuses a mask of another length, one with no known or no missing pixel,
// and none at all.
func TestInpaintMask(t *testing.T) {
	const c, h, w = 2, 3, 4
	plane := make([]bool, h*w) // known: the first row and the last column
	for r := range h {
		for col := range w {
			plane[r*w+col] = r == 0 || col == w-1
		}
	}
	task := Task{Name: TaskInpaintMask, C: c, H: h, W: w, Mask: plane}
	op, err := task.Operator(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for ch := range c {
		for p, k := range plane {
			if k {
				want = append(want, ch*h*w+p)
			}
		}
	}
	if got := op.(*Mask).Known; !slices.Equal(got, want) {
		t.Fatalf("an H·W mask measures %v, want %v", got, want)
	}
	q := make([]float64, c*h*w)
	for j := range q {
		q[j] = float64(j) + 1
	}
	y := Measure(op, q, 0, 1, 0)
	back := make([]float64, len(q))
	Pinv(op, back, y)
	for j, v := range back {
		if wantV := map[bool]float64{true: q[j], false: 0}[slices.Contains(want, j)]; v != wantV {
			t.Fatalf("A⁺y at %d is %v, want %v", j, v, wantV)
		}
	}

	full := make([]bool, c*h*w) // per channel: only the value at index 5 of channel 1 and 0 of channel 0
	full[0], full[h*w+5] = true, true
	op, err = Task{Name: TaskInpaintMask, C: c, H: h, W: w, Mask: full}.Operator(7, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := op.(*Mask).Known; !slices.Equal(got, []int{0, h*w + 5}) {
		t.Fatalf("a C·H·W mask measures %v, want [0 %d]", got, h*w+5)
	}

	allKnown := make([]bool, h*w)
	for j := range allKnown {
		allKnown[j] = true
	}
	for name, tc := range map[string]struct {
		mask []bool
		msg  string
	}{
		"none":          {nil, "got 0"},
		"wrong length":  {make([]bool, h*w+1), "got 13"},
		"nothing known": {make([]bool, h*w), "0 known pixels"},
		"all known":     {allKnown, "12 known pixels of 12"},
	} {
		bad := Task{Name: TaskInpaintMask, C: c, H: h, W: w, Mask: tc.mask}
		err := bad.Check()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: Check says %v, want an error with %q", name, err, tc.msg)
		}
		if _, err := bad.Operator(1, 0); err == nil {
			t.Errorf("%s: Operator built an operator", name)
		}
	}
}
