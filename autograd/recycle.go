package autograd

import (
	"math"

	"holdgo/tensor"
)

// Recycling during the backward sweep. Each node lists the forward tensors
// its closure reads (save); before the sweep, plan finds for every
// intermediate storage the last closure of the sweep that reads it (the
// lowest node index, the sweep running backwards), and the sweep hands the
// storage back to the tape's pool right after that closure ran. A node's
// gradient goes back after its own closure ran (every contribution to it came
// from later nodes), and so do the temporaries a closure made. What the
// closures of later nodes allocate reuses that memory, so a step's peak is
// what is live at once rather than everything it made.
//
// Never recycled: leaves (Const, Var, Param) and unrecorded values, whose
// storage belongs to the caller, everything sharing storage with them
// (Reshape views), and out, the value the sweep starts from, with its
// gradient.

// Recycle selects what a backward sweep does with storage it no longer needs.
type Recycle uint8

const (
	RecycleOn     Recycle = iota // hand it back to the pool for reuse (the default)
	RecycleOff                   // keep everything until Reset
	RecyclePoison                // fill it with NaN and never reuse it (tests: a closure that reads freed storage yields NaN)
)

// SetRecycle chooses what the backward sweep does with storage no closure
// reads any more.
func (g *Tape) SetRecycle(r Recycle) { g.recycle = r }

// MemBytes is the tensor storage the tape's pool owns: the high-water mark of
// its memory since NewTape (a pool never gives memory back).
func (g *Tape) MemBytes() int64 { return g.pool.Bytes() }

// save records the forward tensors v's backward closure reads and returns v.
func (v *Value) save(ts ...*tensor.Tensor) *Value {
	v.saved = ts
	return v
}

// plan returns, for each node index i ≤ start, the storages whose last
// reader in a sweep from start is node i; index start+1 lists the
// intermediate storages no closure reads.
func (g *Tape) plan(start int, out *Value) [][]*tensor.Tensor {
	type entry struct {
		t    *tensor.Tensor
		last int
	}
	var order []any // storages in first-seen order (deterministic sweep)
	last := map[any]*entry{}
	note := func(t *tensor.Tensor, i int) {
		s := t.Storage()
		if s == nil {
			return
		}
		if e, ok := last[s]; ok {
			e.last = min(e.last, i)
			return
		}
		last[s] = &entry{t, i}
		order = append(order, s)
	}
	for i := start; i >= 0; i-- {
		v := g.nodes[i]
		note(v.T, start+1)
		for _, t := range v.saved {
			note(t, i)
		}
	}
	// Storage the caller owns or may still read stays.
	kept := map[any]bool{out.T.Storage(): true}
	if out.Grad != nil {
		kept[out.Grad.Storage()] = true
	}
	recorded := make(map[*Value]bool, start+1)
	for _, v := range g.nodes[:start+1] {
		recorded[v] = true
	}
	for _, v := range g.nodes[start+1:] { // recorded after out
		kept[v.T.Storage()] = true
	}
	for _, v := range g.nodes[:start+1] {
		for _, in := range v.inputs {
			if !recorded[in] { // a leaf or an unrecorded value
				kept[in.T.Storage()] = true
			}
		}
	}
	dying := make([][]*tensor.Tensor, start+2)
	for _, s := range order {
		if e := last[s]; !kept[s] {
			dying[e.last] = append(dying[e.last], e.t)
		}
	}
	return dying
}

// free hands t's storage back to the pool, or in RecyclePoison mode fills it
// with NaN and leaves it unused until Reset.
func (g *Tape) free(t *tensor.Tensor) {
	if g.recycle == RecyclePoison {
		if g.pool.Owns(t) {
			tensor.Fill(t, float32(math.NaN()))
		}
		return
	}
	g.pool.Put(t)
}

// freeTemps frees what v's closure allocated since mark, except the
// gradients of v's inputs.
func (g *Tape) freeTemps(v *Value, mark int) {
	var done []*tensor.Tensor
	for _, t := range g.pool.Since(mark) {
		if t != nil && !isInputGrad(v, t) {
			done = append(done, t)
		}
	}
	for _, t := range done {
		g.free(t)
	}
}

func isInputGrad(v *Value, t *tensor.Tensor) bool {
	s := t.Storage()
	for _, in := range v.inputs {
		if in.Grad != nil && in.Grad.Storage() == s {
			return true
		}
	}
	return false
}
