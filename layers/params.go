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

// Params is a model's parameters: two flat tensors on the device where they live, DevData for the
// values and DevGrad for the gradients, and the tape leaves are views into them at the same offsets.
//
// On the CPU (the default) Data and Grad are DevData's and DevGrad's very memory: one storage. On
// another device (ToDevice) they are the host copies, brought up to date by Download (for a
// checkpoint) and sent to the device by Upload; on the CPU both copy nothing.
type Params struct {
	Data, Grad       []float32
	DevData, DevGrad *tensor.Tensor // on Device(); on the CPU, Data's and Grad's memory
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
	p.DevData, p.DevGrad = tensor.FromSlice(p.Data, n), tensor.FromSlice(p.Grad, n)
	p.values = make([]*autograd.Value, len(specs))
	if err := p.bindValues(); err != nil {
		panic(err) // views of host memory inside its bounds do not fail
	}
	return p
}

// bindValues makes every tape leaf a view into DevData and DevGrad.
func (p *Params) bindValues() error {
	for i, s := range p.specs {
		d, err := tensor.View(p.DevData, p.offsets[i], s.Shape...)
		if err != nil {
			return err
		}
		g, err := tensor.View(p.DevGrad, p.offsets[i], s.Shape...)
		if err != nil {
			return err
		}
		p.values[i] = autograd.Param(d, g)
	}
	return nil
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

// applyFrozen freezes or thaws the values after Freeze, Thaw or a move (devices that keep no
// derived forms ignore it).
func (p *Params) applyFrozen() {
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
	tensor.Fill(p.DevGrad, 0) // a failure travels with DevGrad to the step's check
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

// ToDevice moves the parameters to dev: two flat tensors there hold the values (copied from Data)
// and the gradients, and every tape leaf becomes a view into them. On the CPU they are Data's and
// Grad's memory.
func (p *Params) ToDevice(dev tensor.Device) error {
	if dev == p.dev {
		return nil
	}
	if err := p.Download(); err != nil {
		return err
	}
	data, err := tensor.FromSlice(p.Data, len(p.Data)).ToDevice(dev)
	if err != nil {
		return fmt.Errorf("parameters to %s: %w", dev.Name(), err)
	}
	grad, err := tensor.FromSlice(p.Grad, len(p.Grad)).ToDevice(dev)
	if err != nil {
		return fmt.Errorf("gradients to %s: %w", dev.Name(), err)
	}
	for _, v := range p.values { // what the old values kept goes with them
		tensor.Thaw(v.T)
	}
	p.DevData, p.DevGrad, p.dev = data, grad, dev
	if err := p.bindValues(); err != nil {
		return err
	}
	p.applyFrozen()
	return nil
}

// Upload copies the host values Data to the device (after loading weights; nothing to copy on the
// CPU).
func (p *Params) Upload() error {
	if err := p.DevData.Buffer().Write(p.Data); err != nil {
		return fmt.Errorf("parameters to %s: %w", p.dev.Name(), err)
	}
	return nil
}

// Download copies the device values to Data (nothing to copy on the CPU).
func (p *Params) Download() error {
	if err := p.DevData.Buffer().Read(p.Data); err != nil {
		return fmt.Errorf("parameters from %s: %w", p.dev.Name(), err)
	}
	return nil
}
