//go:build cuda

package device

/*
#include <cuda.h>
#include <stdlib.h>

// gnnprof_load_ptx JIT-compiles a PTX module, writing the driver's error log into log.
static CUresult gnnprof_load_ptx(CUmodule *m, const char *ptx, char *log, size_t size) {
	CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)size};
	return cuModuleLoadDataEx(m, ptx, 2, opts, vals);
}

// gnnprof_launch launches f with n parameters, each in an 8-byte slot of args (a parameter of 4
// bytes in the slot's first 4: the kernel reads as many bytes as its parameter has).
static CUresult gnnprof_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		unsigned bz, unsigned shared, CUstream s, unsigned long long *args, int n) {
	void *params[32];
	for (int i = 0; i < n && i < 32; i++) params[i] = &args[i];
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, NULL);
}
*/
import "C"

import (
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// Module is a PTX module loaded onto a CUDA device.
type Module struct {
	d    *CUDA
	name string
	mod  C.CUmodule
}

// LoadPTX JIT-compiles ptx for the device's GPU; name names the module in errors. The driver's
// log is in the error when it fails.
func (d *CUDA) LoadPTX(name, ptx string) (*Module, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	src := C.CString(ptx) // C memory: the driver must not be handed Go memory holding the text
	defer C.free(unsafe.Pointer(src))
	const logSize = 8 << 10
	log := (*C.char)(C.calloc(logSize, 1))
	defer C.free(unsafe.Pointer(log))
	m := &Module{d: d, name: name}
	if r := C.gnnprof_load_ptx(&m.mod, src, log, logSize); r != C.CUDA_SUCCESS {
		err := cudaError("cuModuleLoadDataEx", r)
		if msg := strings.TrimSpace(C.GoString(log)); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return nil, fmt.Errorf("device %s: loading module %s: %w", d.name, name, err)
	}
	return m, nil
}

// Kernel is a function of a loaded module.
type Kernel struct {
	m    *Module
	name string
	fn   C.CUfunction
}

// Kernel returns the module's kernel named name (its extern "C" name).
func (m *Module) Kernel(name string) (*Kernel, error) {
	if err := m.d.enter(); err != nil {
		return nil, err
	}
	defer m.d.leave()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	k := &Kernel{m: m, name: name}
	if err := cudaError("cuModuleGetFunction", C.cuModuleGetFunction(&k.fn, m.mod, cname)); err != nil {
		return nil, fmt.Errorf("device %s: module %s: kernel %s: %w", m.d.name, m.name, name, err)
	}
	return k, nil
}

// Name is the kernel's name, as its launches are recorded.
func (k *Kernel) Name() string { return k.name }

// Dim3 is a grid's size in blocks, or a block's in threads; a zero Y or Z counts as 1.
type Dim3 struct{ X, Y, Z int }

// maxKernelArgs bounds a kernel's parameters.
const maxKernelArgs = 32

// Launch queues the kernel on stream s (of k's device) with the given grid and block, shared bytes
// of dynamic shared memory, and args: device memory as a Mem or a *Buffer (its address), int
// (passed as a 32-bit int, and refused beyond its range), int32, uint32, int64, uint64, float32 or
// float64, in the order of the kernel's parameters. With recording on, the kernel is recorded on
// the stream's lane with its GPU times.
func (k *Kernel) Launch(s Stream, grid, block Dim3, shared int, args ...any) error {
	cs, ok := s.(*cudaStream)
	if !ok || cs.dev != k.m.d {
		return fmt.Errorf("launching %s: %w: stream %T is not of device %s", k.name, ErrForeign, s, k.m.d.name)
	}
	if len(args) > maxKernelArgs {
		return cs.errorf("launching "+k.name, fmt.Errorf("%w: %d arguments, at most %d", ErrArgument, len(args), maxKernelArgs))
	}
	var slots [maxKernelArgs]uint64
	var held []*Buffer
	defer func() {
		for _, b := range held {
			b.release()
		}
	}()
	for i, a := range args {
		var err error
		slots[i], err = k.slot(a, &held)
		if err != nil {
			return cs.errorf(fmt.Sprintf("launching %s: argument %d", k.name, i), err)
		}
	}
	dim := func(v int) C.uint { return C.uint(max(v, 1)) }
	cs.mu.Lock()
	defer cs.mu.Unlock()
	d := k.m.d
	if err := d.enter(); err != nil {
		return cs.fail(err)
	}
	defer d.leave()
	t, err := d.timer.begin(cs)
	if err != nil {
		return cs.fail(cs.errorf("timing "+k.name, err))
	}
	r := C.gnnprof_launch(k.fn, dim(grid.X), dim(grid.Y), dim(grid.Z), dim(block.X), dim(block.Y), dim(block.Z),
		C.uint(shared), cs.c(), (*C.ulonglong)(unsafe.Pointer(&slots[0])), C.int(len(args)))
	if err := cudaError("cuLaunchKernel", r); err != nil {
		t.cancel()
		return cs.fail(cs.errorf("launching "+k.name, err))
	}
	return cs.fail(t.launched(k.name))
}

// slot encodes one kernel argument in 8 bytes; device memory is marked in use in held until the
// launch is queued.
func (k *Kernel) slot(a any, held *[]*Buffer) (uint64, error) {
	switch v := a.(type) {
	case *Buffer:
		return k.slot(v.All(), held)
	case Mem:
		if err := checkMem(k.m.d, k.m.d.name, &v); err != nil {
			return 0, err
		}
		if v.Kind() != OnDevice {
			return 0, fmt.Errorf("%w: %s memory is not device memory", ErrArgument, v.Kind())
		}
		if !v.buf.acquire() {
			return 0, fmt.Errorf("buffer %q: %w", v.buf.label, ErrFreed)
		}
		*held = append(*held, v.buf)
		return uint64(v.buf.dptr) + uint64(v.off), nil
	case int:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return 0, fmt.Errorf("%w: %d does not fit a 32-bit int (pass an int64)", ErrArgument, v)
		}
		return uint64(uint32(int32(v))), nil
	case int32:
		return uint64(uint32(v)), nil
	case uint32:
		return uint64(v), nil
	case int64:
		return uint64(v), nil
	case uint64:
		return v, nil
	case float32:
		return uint64(math.Float32bits(v)), nil
	case float64:
		return math.Float64bits(v), nil
	}
	return 0, fmt.Errorf("%w: a kernel cannot take a %T", ErrArgument, a)
}
