package train

import (
	"fmt"
	"time"

	"holdgo/autograd"
	"holdgo/dist"
	"holdgo/tensor"
)

// The reduction in device memory (SetDeviceComm: NCCL on GPUs, the in-process
// engine in tests). The flat gradient is cut into buckets of whole parameters,
// contiguous ranges of it, from the last parameter back to the first (the order
// in which a backward pass meets a network's layers, PyTorch DDP's too); each
// bucket's sum over the ranks starts as soon as the backward sweep has made its
// last contribution to every parameter in it (autograd.Tape.OnGradDone), so the
// communication runs while the sweep goes on. The loss follows, as a float64
// sum (a rank's non-finite loss makes the sum non-finite, and every rank skips
// the step); then the step waits for them all, and clipping, Adam and the EMA
// run on the summed gradient. Every rank runs the same graph, so the buckets
// finish in the same order everywhere.

// DefaultBucketBytes is the size a bucket fills up to before the next begins
// (PyTorch DDP's default): large enough that a reduction's latency is small
// against its transfer, small enough that the first ones overlap most of the
// backward pass.
const DefaultBucketBytes = 25 << 20

// Bucket is one contiguous range of the flat gradient reduced in one call:
// elements [Lo, Hi), parameters [First, Last] in layout order.
type Bucket struct {
	Lo, Hi      int
	First, Last int
}

// bucketing is the trainer's bucket layout on its current gradient tensor and
// the bookkeeping of the step in progress.
type bucketing struct {
	grad    *tensor.Tensor   // the DevGrad the views were made of
	buckets []Bucket         // index 0 holds the last parameters
	views   []*tensor.Tensor // DevGrad's range of each bucket
	of      []int            // parameter → its bucket
	left    []int            // parameters of each bucket whose gradient is not final yet
	started []bool
	order   []int // buckets in the order started this step
	swept   int   // buckets started during the backward sweep this step
	err     error // the first StartAllreduce error of the step
}

// SetDeviceComm makes t one rank of data-parallel training whose gradients
// are summed in device memory by c, in buckets of up to bucketBytes (0:
// DefaultBucketBytes) started as the backward pass finishes them. The loss
// function computes the rank's shard (ShardScoreLoss), as with SetComm,
// which still carries Broadcast; c replaces the host all-reduce of the step.
func (t *Trainer) SetDeviceComm(c dist.DeviceComm, bucketBytes int) {
	if bucketBytes <= 0 {
		bucketBytes = DefaultBucketBytes
	}
	t.dcomm, t.bucketBytes, t.bk = c, bucketBytes, bucketing{}
}

// deviceParallel reports whether steps reduce in device memory.
func (t *Trainer) deviceParallel() bool { return t.dcomm != nil && t.dcomm.Size() > 1 }

// Buckets are the gradient's buckets (index 0 holds the last parameters) and
// the order in which the last step started their reductions; nil before a
// step with a device communicator. Swept counts the buckets started while
// the backward sweep was still running.
func (t *Trainer) Buckets() (buckets []Bucket, order []int, swept int) {
	return t.bk.buckets, t.bk.order, t.bk.swept
}

// layoutBuckets cuts the gradient of the current device into buckets.
func (t *Trainer) layoutBuckets() error {
	specs := t.Params.Specs()
	offsets := make([]int, len(specs)+1)
	for i, s := range specs {
		offsets[i+1] = offsets[i] + tensor.Zeros(s.Shape...).Len()
	}
	b := bucketing{grad: t.Params.DevGrad, of: make([]int, len(specs))}
	limit := max(1, t.bucketBytes/4)
	for last := len(specs) - 1; last >= 0; {
		first := last
		for first > 0 && offsets[last+1]-offsets[first-1] <= limit {
			first--
		}
		k := len(b.buckets)
		b.buckets = append(b.buckets, Bucket{Lo: offsets[first], Hi: offsets[last+1], First: first, Last: last})
		for i := first; i <= last; i++ {
			b.of[i] = k
		}
		v, err := tensor.View(t.Params.DevGrad, offsets[first], offsets[last+1]-offsets[first])
		if err != nil {
			return err
		}
		b.views = append(b.views, v)
		last = first - 1
	}
	b.left, b.started = make([]int, len(b.buckets)), make([]bool, len(b.buckets))
	t.bk = b
	return nil
}

// armBuckets prepares the step's reductions: each bucket starts once the
// sweep has finished its parameters.
func (t *Trainer) armBuckets() error {
	if t.bk.grad != t.Params.DevGrad {
		if err := t.layoutBuckets(); err != nil {
			return err
		}
	}
	b := &t.bk
	for k, bu := range b.buckets {
		b.left[k], b.started[k] = bu.Last-bu.First+1, false
	}
	b.order, b.swept, b.err = b.order[:0], 0, nil
	vals := make([]*autograd.Value, len(b.of))
	for i := range vals {
		vals[i] = t.Params.Value(i)
	}
	t.tape.OnGradDone(vals, func(i int) {
		k := b.of[i]
		if b.left[k]--; b.left[k] == 0 {
			b.swept++
			t.startBucket(k)
		}
	})
	return nil
}

// startBucket starts bucket k's reduction (once).
func (t *Trainer) startBucket(k int) {
	b := &t.bk
	if b.started[k] {
		return
	}
	b.started[k] = true
	b.order = append(b.order, k)
	if err := t.dcomm.StartAllreduce(b.views[k].Buffer(), dist.F32); err != nil && b.err == nil {
		b.err = err
	}
}

// finishBuckets starts what the sweep did not (a parameter outside the
// graph of this step's loss: its zero gradient is summed all the same, in
// bucket order), then the loss, and waits for every reduction.
func (t *Trainer) finishBuckets() error {
	b := &t.bk
	for k := range b.buckets {
		t.startBucket(k)
	}
	loss, err := tensor.View(t.state.stats, 0, 2)
	if err == nil {
		err = b.err
	}
	if err == nil {
		err = t.dcomm.StartAllreduce(loss.Buffer(), dist.F64)
	}
	start := time.Now()
	if werr := t.dcomm.Wait(); err == nil {
		err = werr
	}
	t.reduceTime += time.Since(start)
	if err != nil {
		return fmt.Errorf("step %d: all-reduce of the gradients (%s): %w", t.Step+1, t.dcomm.Name(), err)
	}
	return nil
}
