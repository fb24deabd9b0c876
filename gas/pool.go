package gas

import (
	"errors"
	"fmt"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/nn"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/train"
)

// Pool moves history rows between the host and the device, as the reference's AsyncIOPool does.
//
// A pull brings rows of a history into one of the pool's slots: a pinned host buffer the rows are
// gathered into and the device buffer they are copied to. Pulls are issued ahead (a training step
// issues the pulls of all its layers before the forward pass) and run in order on a worker
// goroutine: wait until the pull's slot is free, gather the rows (the halo's, by id) into the
// slot's pinned buffer, copy them — and the contiguous in-batch rows, straight from the pinned
// table — to the device on the pull stream, record an event. The forward pass consumes the pulls
// in the same order: [Pool.Wait] blocks until the copy has ended, [Pool.Free] hands the slot back. Pushes copy
// device rows back into a history's contiguous ranges on the push stream; [Pool.SyncPushes] waits for
// them, once per step, before the next step's pulls may read what they wrote.
//
// With sync set, the pool does the same copies synchronously on the caller's lane, as the
// reference does without a pool: the host gathers, copies and waits at the point of use.
type Pool struct {
	dev        *train.Device
	sync       bool
	pullStream device.Stream
	pushStream device.Stream
	worker     *trace.Lane

	slots []*slot
	next  int     // the slot of the next pull
	queue []*pull // issued, not yet freed (the consumer's side)
	work  chan *pull
	done  chan struct{}

	outs    []outSlot // device buffers that inference outputs are pushed from
	nextOut int
}

// slot is a pinned staging buffer and the device buffer its rows are copied to.
type slot struct {
	host, dev train.Buf[float32]
	free      chan struct{} // holds a token while the slot is free
	// read completes once the kernels queued before the slot was freed, which read its rows,
	// have run (a GPU's; nil elsewhere): the next pull into it waits for it.
	read device.Event
}

// pull is one pull request: count rows from first (copied straight from the pinned table), then
// the rows ids (gathered), of h.
type pull struct {
	h            *History
	first, count int
	ids          []int32
	slot         *slot
	ready        chan struct{} // closed once the copies are queued (or failed)
	event        device.Event  // completes with the copies; nil when they were synchronous
	err          error
}

func (r *pull) rows() int { return r.count + len(r.ids) }

// outSlot keeps an inference output on the device until its push has ended.
type outSlot struct {
	buf  train.Buf[float32]
	done device.Event
}

// newPool returns a pool of size slots of rows×width values each (grown when a pull needs more).
func newPool(d *train.Device, size, rows, width int, sync bool) (*Pool, error) {
	p := &Pool{dev: d, sync: sync, slots: make([]*slot, max(size, 1)), outs: make([]outSlot, max(size, 1))}
	var err error
	if p.pullStream, err = d.Dev.NewStream("history pull"); err != nil {
		return nil, err
	}
	if p.pushStream, err = d.Dev.NewStream("history push"); err != nil {
		return nil, err
	}
	for k := range p.slots {
		s := &slot{free: make(chan struct{}, 1)}
		s.free <- struct{}{}
		if err := errors.Join(s.host.Grow(d, rows*width, true, "pull buffer (pinned)"),
			s.dev.Grow(d, rows*width, false, "pulled rows")); err != nil {
			return nil, err
		}
		p.slots[k] = s
	}
	if !sync {
		p.worker = d.Lane("history pull worker")
		p.work = make(chan *pull, len(p.slots)+1)
		p.done = make(chan struct{})
		go p.loop()
	}
	return p, nil
}

// loop runs the issued pulls in order.
func (p *Pool) loop() {
	defer close(p.done)
	for r := range p.work {
		<-r.slot.free
		r.event, r.err = p.fill(r, p.worker)
		close(r.ready)
	}
}

// Pull issues a pull of count rows of h from first, then of the rows ids (ids must stay
// unchanged until the pull is freed). Without sync it returns at once; at most len(slots) pulls
// may be outstanding.
func (p *Pool) Pull(lane *trace.Lane, h *History, first, count int, ids []int32) error {
	if len(p.queue) == len(p.slots) {
		return fmt.Errorf("history pool: %d pulls outstanding, the most its %d slots allow", len(p.queue), len(p.slots))
	}
	r := &pull{h: h, first: first, count: count, ids: ids, slot: p.slots[p.next], ready: make(chan struct{})}
	p.next = (p.next + 1) % len(p.slots)
	p.queue = append(p.queue, r)
	if p.sync {
		<-r.slot.free
		r.event, r.err = p.fill(r, lane)
		close(r.ready)
		return r.err
	}
	p.work <- r
	return nil
}

// fill gathers and copies a pull's rows into its slot; the gather is recorded on lane.
func (p *Pool) fill(r *pull, lane *trace.Lane) (device.Event, error) {
	w, s := r.h.Width, r.slot
	d := p.dev
	n := r.rows() * w
	if err := errors.Join(s.host.Grow(d, n, true, "pull buffer (pinned)"), s.dev.Grow(d, n, false, "pulled rows")); err != nil {
		return nil, err
	}
	cp := func(dst, src device.Mem) error {
		if p.sync {
			return d.Dev.Copy(lane, dst, src)
		}
		return p.pullStream.CopyAsync(dst, src)
	}
	if s.read != nil && !p.sync {
		if err := p.pullStream.WaitEvent(s.read); err != nil {
			return nil, err
		}
	}
	if r.count > 0 {
		if err := cp(s.dev.Range(0, r.count*w), r.h.rows(r.first, r.count)); err != nil {
			return nil, fmt.Errorf("pulling history rows: %w", err)
		}
	}
	if len(r.ids) > 0 {
		sp := lane.Begin("history.gather", role.Gather)
		nn.GatherRows(r.h.Mat(), r.ids, nn.MatFrom(len(r.ids), w, s.host.Data))
		sp.EndWork(0, 2*int64(len(r.ids)*w)*4)
		if err := cp(s.dev.Range(r.count*w, len(r.ids)*w), s.host.Range(0, len(r.ids)*w)); err != nil {
			return nil, fmt.Errorf("pulling history rows: %w", err)
		}
	}
	if p.sync {
		return nil, nil
	}
	return p.pullStream.Record()
}

// Wait blocks until the oldest pull not yet freed has arrived on the device and returns its rows
// (in-batch rows first, then the gathered ones), valid until [Pool.Free].
func (p *Pool) Wait(lane *trace.Lane) (*nn.Mat, error) {
	if len(p.queue) == 0 {
		return nil, errors.New("history pool: waiting with no pull issued")
	}
	r := p.queue[0]
	<-r.ready
	if r.err != nil {
		return nil, r.err
	}
	if r.event != nil {
		if err := r.event.Wait(lane); err != nil {
			return nil, fmt.Errorf("pulling history rows: %w", err)
		}
	}
	return train.MatOf(p.dev, &r.slot.dev, r.rows(), r.h.Width), nil
}

// Free hands the oldest pull's slot back, once the kernels queued so far, which may read its
// rows, have run.
func (p *Pool) Free() error {
	r := p.queue[0]
	p.queue = p.queue[1:]
	var err error
	if p.dev.OnGPU() {
		r.slot.read, err = p.dev.Dev.DefaultStream().Record()
	}
	r.slot.free <- struct{}{}
	return err
}

// Push copies rows of src (device memory, rows of h's width) into h: counts[i] rows to
// offsets[i], in order. Asynchronous on the push stream unless the pool is synchronous.
func (p *Pool) Push(lane *trace.Lane, h *History, src *train.Buf[float32], offsets, counts []int64) error {
	if !p.sync {
		if err := p.dev.AfterCompute(p.pushStream); err != nil { // src's rows are computed
			return err
		}
	}
	w, s := h.Width, 0
	for i, off := range offsets {
		n := int(counts[i])
		dst, from := h.rows(int(off), n), src.Range(s*w, n*w)
		var err error
		if p.sync {
			err = p.dev.Dev.Copy(lane, dst, from)
		} else {
			err = p.pushStream.CopyAsync(dst, from)
		}
		if err != nil {
			return fmt.Errorf("pushing history rows: %w", err)
		}
		s += n
	}
	return nil
}

// PushOut pushes an inference output (owned by a layer, which overwrites it for the next batch)
// into count rows of h from first: it is copied into one of the pool's output buffers first,
// which is reused once its previous push has ended.
func (p *Pool) PushOut(lane *trace.Lane, h *History, out *nn.Mat, first, count int) error {
	o := &p.outs[p.nextOut]
	p.nextOut = (p.nextOut + 1) % len(p.outs)
	if o.done != nil {
		if err := o.done.Wait(lane); err != nil {
			return err
		}
		o.done = nil
	}
	if err := o.buf.Grow(p.dev, out.Len(), false, "inference output"); err != nil {
		return err
	}
	if p.dev.OnGPU() {
		if err := p.dev.CopyOnDevice(o.buf.Mem(), p.dev.MemOf(out)); err != nil {
			return err
		}
	} else {
		copy(o.buf.Data, out.Data[:out.Len()])
	}
	if err := p.Push(lane, h, &o.buf, []int64{int64(first)}, []int64{int64(count)}); err != nil || p.sync {
		return err
	}
	var err error
	o.done, err = p.pushStream.Record()
	return err
}

// SyncPushes waits until every push issued has ended.
func (p *Pool) SyncPushes(lane *trace.Lane) error {
	if p.sync {
		return nil
	}
	return p.pushStream.Synchronize(lane)
}

// release says that the slots and output buffers hold nothing in use (an inference is over, its
// pushes synchronised): they stay allocated for the next pulls.
func (p *Pool) release() {
	for _, s := range p.slots {
		s.dev.Release(p.dev)
	}
	for k := range p.outs {
		p.outs[k].buf.Release(p.dev)
	}
}

// close stops the worker and frees the slots.
func (p *Pool) close() error {
	if p.work != nil {
		close(p.work)
		<-p.done
		p.work = nil
	}
	var errs []error
	for _, s := range p.slots {
		errs = append(errs, s.host.Free(p.dev), s.dev.Free(p.dev))
	}
	for k := range p.outs {
		errs = append(errs, p.outs[k].buf.Free(p.dev))
	}
	return errors.Join(errs...)
}
