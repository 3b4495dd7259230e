// Package layers holds holdgo's network layers. A model's parameters live in
// one flat buffer and their gradients in another (Params), so the optimizer,
// the EMA and a checkpoint each touch one slice.
package layers

import (
	"fmt"
	"slices"

	"holdgo/autograd"
	"holdgo/tensor"
)

// Spec names one parameter tensor and its shape.
type Spec struct {
	Name  string
	Shape []int
}

// Params is a model's parameters: tensors that are views into Data, with
// gradients that are views into Grad at the same offsets.
type Params struct {
	Data, Grad []float32
	specs      []Spec
	offsets    []int
	values     []*autograd.Value
}

// NewParams lays out the specs contiguously, in order, zero-initialised.
func NewParams(specs []Spec) *Params {
	p := &Params{specs: slices.Clone(specs)}
	n := 0
	for _, s := range specs {
		p.offsets = append(p.offsets, n)
		n += tensor.Zeros(s.Shape...).Len()
	}
	p.Data, p.Grad = make([]float32, n), make([]float32, n)
	for i, s := range specs {
		lo, hi := p.offsets[i], p.offsets[i]+numel(s.Shape)
		p.values = append(p.values, autograd.Param(
			tensor.FromSlice(p.Data[lo:hi:hi], s.Shape...), tensor.FromSlice(p.Grad[lo:hi:hi], s.Shape...)))
	}
	return p
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Len is the total number of scalars.
func (p *Params) Len() int { return len(p.Data) }

// Specs lists the parameter tensors in layout order.
func (p *Params) Specs() []Spec { return p.specs }

// Value returns parameter i as a tape leaf (its gradient is a view into Grad).
func (p *Params) Value(i int) *autograd.Value { return p.values[i] }

// Slice returns the storage of parameter i within buf (Data, Grad, or any
// buffer with the same layout, such as EMA weights).
func (p *Params) Slice(buf []float32, i int) []float32 {
	lo := p.offsets[i]
	return buf[lo : lo+numel(p.specs[i].Shape)]
}

// Index returns the position of the named parameter.
func (p *Params) Index(name string) (int, error) {
	for i, s := range p.specs {
		if s.Name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no parameter named %q", name)
}

// ZeroGrad clears the gradient buffer.
func (p *Params) ZeroGrad() { clear(p.Grad) }
