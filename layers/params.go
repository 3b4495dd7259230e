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
//
// On a device (ToDevice) the parameters and gradients live in two flat device
// tensors, DevData and DevGrad, and the tape leaves are views into them; Data
// and Grad are then the host copies, brought up to date by Download (for a
// checkpoint) and sent to the device by Upload.
type Params struct {
	Data, Grad       []float32
	DevData, DevGrad *tensor.Tensor // nil on the host
	specs            []Spec
	offsets          []int
	values           []*autograd.Value
	dev              tensor.Device
	frozen           bool // Freeze: the host values are frozen tensors
}

// NewParams lays out the specs contiguously, in order, zero-initialised.
func NewParams(specs []Spec) *Params {
	p := &Params{specs: slices.Clone(specs), dev: tensor.CPU}
	n := 0
	for _, s := range specs {
		p.offsets = append(p.offsets, n)
		n += tensor.Zeros(s.Shape...).Len()
	}
	p.Data, p.Grad = make([]float32, n), make([]float32, n, n+ReduceSlots)
	for i, s := range specs {
		lo, hi := p.offsets[i], p.offsets[i]+numel(s.Shape)
		p.values = append(p.values, autograd.Param(
			tensor.FromSlice(p.Data[lo:hi:hi], s.Shape...), tensor.FromSlice(p.Grad[lo:hi:hi], s.Shape...)))
	}
	return p
}

// Freeze declares the parameters fixed until Thaw (tensor.Freeze): a network that only samples
// keeps its convolutions' transformed weights instead of making them on every forward pass
// (ncsnpp-cifar10: 1.6 GiB kept, 17 % of a forward pass saved). Writing to Data while frozen
// leaves those forms stale: Thaw first. A checkpoint loaded for sampling (train.LoadModel) is frozen.
func (p *Params) Freeze() {
	p.frozen = true
	p.applyFrozen()
}

// Thaw undoes Freeze and releases what it kept.
func (p *Params) Thaw() {
	p.frozen = false
	p.applyFrozen()
}

// Frozen reports whether the parameters are frozen (Freeze).
func (p *Params) Frozen() bool { return p.frozen }

// applyFrozen freezes or thaws the host values after Freeze, Thaw or a move to the host; device
// values are left as they are (their devices keep no derived forms).
func (p *Params) applyFrozen() {
	if p.dev != tensor.CPU {
		return
	}
	for _, v := range p.values {
		if p.frozen {
			tensor.Freeze(v.T)
		} else {
			tensor.Thaw(v.T)
		}
	}
}

// ReduceSlots is the spare capacity after Grad's end: data-parallel
// training appends a step's loss and non-finite count there, so that one
// all-reduce of GradReduce sums the gradients and those scalars together.
const ReduceSlots = 2

// GradReduce returns Grad extended by its ReduceSlots spare elements (the
// same memory: Grad is GradReduce()[:Len()]).
func (p *Params) GradReduce() []float32 { return p.Grad[:len(p.Grad)+ReduceSlots] }

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

// ZeroGrad clears the gradient buffer (on the device where the parameters live).
func (p *Params) ZeroGrad() {
	if p.DevGrad != nil {
		tensor.Fill(p.DevGrad, 0) // a failure travels with DevGrad to the step's check
		return
	}
	clear(p.Grad)
}

// GradErr returns the first error carried by a parameter's gradient (a device op of the backward
// pass that failed; tensor.OpError), without waiting for the device.
func (p *Params) GradErr() error {
	for _, v := range p.values {
		if err := tensor.Err(v.Grad, p.DevGrad); err != nil {
			return err
		}
	}
	return nil
}

// Device is where the parameters live.
func (p *Params) Device() tensor.Device { return p.dev }

// ToDevice moves the parameters to dev: two flat device tensors hold the
// values (copied from Data) and the gradients, and every tape leaf becomes a
// view into them. Moving back to tensor.CPU downloads the values first.
func (p *Params) ToDevice(dev tensor.Device) error {
	if dev == p.dev {
		return nil
	}
	if dev == tensor.CPU {
		if err := p.Download(); err != nil {
			return err
		}
		p.DevData, p.DevGrad, p.dev = nil, nil, tensor.CPU
		for i, s := range p.specs {
			lo, hi := p.offsets[i], p.offsets[i]+numel(s.Shape)
			p.values[i] = autograd.Param(tensor.FromSlice(p.Data[lo:hi:hi], s.Shape...), tensor.FromSlice(p.Grad[lo:hi:hi], s.Shape...))
		}
		p.applyFrozen()
		return nil
	}
	data, err := tensor.FromSlice(p.Data, len(p.Data)).ToDevice(dev)
	if err != nil {
		return fmt.Errorf("parameters to %s: %w", dev.Name(), err)
	}
	grad := tensor.New(dev, len(p.Grad))
	values := make([]*autograd.Value, len(p.specs))
	for i, s := range p.specs {
		d, err := tensor.View(data, p.offsets[i], s.Shape...)
		if err != nil {
			return err
		}
		g, err := tensor.View(grad, p.offsets[i], s.Shape...)
		if err != nil {
			return err
		}
		values[i] = autograd.Param(d, g)
	}
	if p.dev == tensor.CPU { // the host values are dropped: release what they kept
		for _, v := range p.values {
			tensor.Thaw(v.T)
		}
	}
	p.DevData, p.DevGrad, p.values, p.dev = data, grad, values, dev
	return nil
}

// Upload copies the host values Data to the device (after loading weights).
func (p *Params) Upload() error {
	if p.DevData == nil || len(p.Data) == 0 {
		return nil
	}
	if err := p.DevData.Buffer().Write(p.Data); err != nil {
		return fmt.Errorf("parameters to %s: %w", p.dev.Name(), err)
	}
	return nil
}

// Download copies the device values to Data.
func (p *Params) Download() error {
	if p.DevData == nil || len(p.Data) == 0 {
		return nil
	}
	if err := p.DevData.Buffer().Read(p.Data); err != nil {
		return fmt.Errorf("parameters from %s: %w", p.dev.Name(), err)
	}
	return nil
}
