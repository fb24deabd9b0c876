// A fake CUDA driver: libcuda.so.1 over host memory, implementing the driver functions gnnprof's
// CUDA backend calls, so that tests exercise its streams, events, copies and memory accounting on
// a machine without a GPU (scripts/cuda test). It runs gnnprof's own kernels, compiled for the
// host (kernels.cc): a module loads when it is PTX, and its functions are found when the fake
// knows a kernel of that name.
//
// Device memory is host memory from malloc; a device pointer is its address, and every copy checks
// that its device range lies inside one live allocation (CUDA_ERROR_INVALID_VALUE otherwise). Each
// stream is a thread running its queue in order: copies, memsets, event records and waits. An event
// completes when its stream reaches it and takes the time then (CLOCK_MONOTONIC).
//
// Environment, read when used: FAKECUDA_MEMORY (device memory in bytes, default 1 GiB), and
// FAKECUDA_COPY_DELAY_US (each copy takes at least that long on its stream: a slow link, so
// that tests can see the host go on while a copy runs).
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

// fakecuda_is_fake lets a program tell the fake from NVIDIA's driver (dlsym finds it).
API int fakecuda_is_fake(void) { return 1; }

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; // guards the allocation table and counters
static int initialised;

static int64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t env_int(const char *name, int64_t dflt) {
	const char *v = getenv(name);
	return v && *v ? strtoll(v, NULL, 10) : dflt;
}

// ---- device memory ----

struct alloc {
	uintptr_t base;
	size_t size;
};
static struct alloc *allocs;
static size_t nallocs, capallocs;
static size_t used;

static size_t total_memory(void) { return (size_t)env_int("FAKECUDA_MEMORY", (int64_t)1 << 30); }

// valid_range reports whether [p, p+n) lies inside one live allocation.
static int valid_range(CUdeviceptr p, size_t n) {
	int ok = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nallocs; i++) {
		if (p >= allocs[i].base && p - allocs[i].base <= allocs[i].size && n <= allocs[i].size - (p - allocs[i].base)) {
			ok = 1;
			break;
		}
	}
	pthread_mutex_unlock(&mu);
	return ok;
}

// ---- streams ----

enum op_kind { OP_COPY, OP_MEMSET, OP_RECORD, OP_WAIT, OP_MARK, OP_KERNEL };

// kernels.cc
struct fake_kernel;
const struct fake_kernel *fakecuda_find_kernel(const char *name);
int fakecuda_kernel_params(const struct fake_kernel *k, const size_t **sizes);
void fakecuda_run(const struct fake_kernel *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                  unsigned bz, void **params);

// A kernel launch as queued: its parameters' values are copied at the launch, as the driver does.
struct launch {
	const struct fake_kernel *k;
	unsigned grid[3], block[3];
	uint64_t slots[32];
	void *params[32];
};

struct CUevent_st {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t recorded;  // records issued
	uint64_t completed; // records reached by their stream
	int64_t when;       // time of the last completed record
	unsigned flags;
};

struct op {
	enum op_kind kind;
	void *dst;
	const void *src;
	size_t n;
	unsigned char value;
	CUevent ev;
	uint64_t gen; // the record an OP_RECORD completes, or an OP_WAIT waits for
	struct launch *launch;
	struct op *next;
};

struct CUstream_st {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;     // work queued, or the queue drained
	struct op *head, *tail;
	int running; // an op is being executed
	int closing;
};

static void exec_op(struct op *o) {
	switch (o->kind) {
	case OP_COPY: {
		int64_t delay = env_int("FAKECUDA_COPY_DELAY_US", 0);
		int64_t until = now_ns() + delay * 1000;
		memmove(o->dst, o->src, o->n);
		while (delay > 0 && now_ns() < until) usleep(50);
		break;
	}
	case OP_MEMSET:
		memset(o->dst, o->value, o->n);
		break;
	case OP_RECORD:
		pthread_mutex_lock(&o->ev->mu);
		if (o->gen > o->ev->completed) {
			o->ev->completed = o->gen;
			o->ev->when = now_ns();
		}
		pthread_cond_broadcast(&o->ev->cv);
		pthread_mutex_unlock(&o->ev->mu);
		break;
	case OP_WAIT:
		pthread_mutex_lock(&o->ev->mu);
		while (o->ev->completed < o->gen) pthread_cond_wait(&o->ev->cv, &o->ev->mu);
		pthread_mutex_unlock(&o->ev->mu);
		break;
	case OP_MARK:
		break;
	case OP_KERNEL: {
		struct launch *l = o->launch;
		fakecuda_run(l->k, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->params);
		free(l);
		break;
	}
	}
}

static void *stream_loop(void *arg) {
	struct CUstream_st *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->head && !s->closing) pthread_cond_wait(&s->cv, &s->mu);
		if (!s->head) break;
		struct op *o = s->head;
		s->running = 1;
		pthread_mutex_unlock(&s->mu);
		exec_op(o);
		pthread_mutex_lock(&s->mu);
		s->head = o->next;
		if (!s->head) s->tail = NULL;
		s->running = 0;
		free(o);
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

// The legacy default stream (a NULL CUstream) is a stream like the others here.
static struct CUstream_st *null_stream;
static struct CUstream_st *all_streams[1024];
static int nstreams;

static struct CUstream_st *new_stream(void) {
	struct CUstream_st *s = calloc(1, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	pthread_create(&s->thread, NULL, stream_loop, s);
	pthread_mutex_lock(&mu);
	if (nstreams < 1024) all_streams[nstreams++] = s;
	pthread_mutex_unlock(&mu);
	return s;
}

static struct CUstream_st *stream_of(CUstream h) { return h ? h : null_stream; }

static CUresult push(CUstream h, struct op o) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	struct CUstream_st *s = stream_of(h);
	struct op *p = malloc(sizeof *p);
	if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
	*p = o;
	p->next = NULL;
	pthread_mutex_lock(&s->mu);
	if (s->tail) s->tail->next = p; else s->head = p;
	s->tail = p;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return CUDA_SUCCESS;
}

static void drain(struct CUstream_st *s) {
	pthread_mutex_lock(&s->mu);
	while (s->head || s->running) pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

// ---- initialisation, devices, contexts ----

static int fake_context; // the one context's handle points here

API CUresult cuInit(unsigned int flags) {
	if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	int first = !initialised;
	initialised = 1;
	pthread_mutex_unlock(&mu);
	if (first) null_stream = new_stream();
	return CUDA_SUCCESS;
}

API CUresult cuDriverGetVersion(int *v) {
	*v = CUDA_VERSION;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetCount(int *n) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	*n = 1;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, len, "gnnprof fake CUDA device (host memory)");
	return CUDA_SUCCESS;
}

API CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d) {
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	*bytes = total_memory();
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 8; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *v = 2; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
	default: *v = 0;
	}
	return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	*c = (CUcontext)&fake_context;
	return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRelease(CUdevice d) { return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }

API CUresult cuCtxSetCurrent(CUcontext c) {
	return c == NULL || c == (CUcontext)&fake_context ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

API CUresult cuCtxGetCurrent(CUcontext *c) {
	*c = (CUcontext)&fake_context;
	return CUDA_SUCCESS;
}

API CUresult cuCtxSynchronize(void) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&mu);
	int n = nstreams;
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < n; i++)
		if (all_streams[i]) drain(all_streams[i]);
	return CUDA_SUCCESS;
}

static const char *error_name(CUresult r) {
	switch (r) {
	case CUDA_SUCCESS: return "CUDA_SUCCESS";
	case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
	case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
	case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
	case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
	case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
	case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
	case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
	case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
	case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
	case CUDA_ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
	case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
	default: return NULL;
	}
}

API CUresult cuGetErrorName(CUresult r, const char **s) {
	*s = error_name(r);
	return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult r, const char **s) {
	switch (r) {
	case CUDA_ERROR_NOT_SUPPORTED: *s = "operation not supported (by the fake driver)"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
	case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
	case CUDA_ERROR_NOT_READY: *s = "device not ready"; break;
	case CUDA_ERROR_INVALID_PTX: *s = "a PTX JIT compilation failed"; break;
	default: *s = error_name(r);
	}
	return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// ---- memory ----

API CUresult cuMemGetInfo(size_t *free_, size_t *total) {
	size_t t = total_memory();
	pthread_mutex_lock(&mu);
	*free_ = used < t ? t - used : 0;
	pthread_mutex_unlock(&mu);
	*total = t;
	return CUDA_SUCCESS;
}

API CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	if (n == 0) return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	int full = n > total_memory() - used;
	pthread_mutex_unlock(&mu);
	if (full) return CUDA_ERROR_OUT_OF_MEMORY;
	void *m = NULL;
	if (posix_memalign(&m, 256, n) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
	memset(m, 0xa5, n); // device memory is not zeroed: show it
	pthread_mutex_lock(&mu);
	if (nallocs == capallocs) {
		capallocs = capallocs ? 2 * capallocs : 64;
		allocs = realloc(allocs, capallocs * sizeof *allocs);
	}
	allocs[nallocs++] = (struct alloc){(uintptr_t)m, n};
	used += n;
	pthread_mutex_unlock(&mu);
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

API CUresult cuMemFree(CUdeviceptr p) {
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nallocs; i++) {
		if (allocs[i].base == p) {
			used -= allocs[i].size;
			allocs[i] = allocs[--nallocs];
			pthread_mutex_unlock(&mu);
			free((void *)(uintptr_t)p);
			return CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&mu);
	return CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags) {
	(void)flags;
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	if (posix_memalign(p, 4096, n ? n : 1) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
	return CUDA_SUCCESS;
}

API CUresult cuMemFreeHost(void *p) {
	free(p);
	return CUDA_SUCCESS;
}

API CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
	if (!valid_range(p, n)) return CUDA_ERROR_INVALID_VALUE;
	return push(s, (struct op){.kind = OP_MEMSET, .dst = (void *)(uintptr_t)p, .n = n, .value = v});
}

API CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
	if (!valid_range(dst, n)) return CUDA_ERROR_INVALID_VALUE;
	return push(s, (struct op){.kind = OP_COPY, .dst = (void *)(uintptr_t)dst, .src = src, .n = n});
}

API CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
	if (!valid_range(src, n)) return CUDA_ERROR_INVALID_VALUE;
	return push(s, (struct op){.kind = OP_COPY, .dst = dst, .src = (const void *)(uintptr_t)src, .n = n});
}

API CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
	if (!valid_range(dst, n) || !valid_range(src, n)) return CUDA_ERROR_INVALID_VALUE;
	return push(s, (struct op){.kind = OP_COPY, .dst = (void *)(uintptr_t)dst, .src = (const void *)(uintptr_t)src, .n = n});
}

// ---- streams and events ----

API CUresult cuStreamCreate(CUstream *s, unsigned int flags) {
	(void)flags;
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	*s = new_stream();
	return CUDA_SUCCESS;
}

API CUresult cuStreamDestroy(CUstream h) {
	if (!h) return CUDA_ERROR_INVALID_HANDLE;
	drain(h);
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nstreams; i++)
		if (all_streams[i] == h) all_streams[i] = NULL;
	pthread_mutex_unlock(&mu);
	pthread_mutex_lock(&h->mu);
	h->closing = 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->thread, NULL);
	free(h);
	return CUDA_SUCCESS;
}

API CUresult cuStreamSynchronize(CUstream h) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	drain(stream_of(h));
	return CUDA_SUCCESS;
}

API CUresult cuStreamQuery(CUstream h) {
	struct CUstream_st *s = stream_of(h);
	pthread_mutex_lock(&s->mu);
	int busy = s->head || s->running;
	pthread_mutex_unlock(&s->mu);
	return busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

API CUresult cuEventCreate(CUevent *e, unsigned int flags) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	struct CUevent_st *ev = calloc(1, sizeof *ev);
	pthread_mutex_init(&ev->mu, NULL);
	pthread_cond_init(&ev->cv, NULL);
	ev->flags = flags;
	*e = ev;
	return CUDA_SUCCESS;
}

API CUresult cuEventDestroy(CUevent e) {
	if (!e) return CUDA_ERROR_INVALID_HANDLE;
	// A record still queued would touch it: wait for it first.
	pthread_mutex_lock(&e->mu);
	while (e->completed < e->recorded) pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
	free(e);
	return CUDA_SUCCESS;
}

API CUresult cuEventRecord(CUevent e, CUstream s) {
	if (!e) return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&e->mu);
	uint64_t gen = ++e->recorded;
	pthread_mutex_unlock(&e->mu);
	return push(s, (struct op){.kind = OP_RECORD, .ev = e, .gen = gen});
}

API CUresult cuEventQuery(CUevent e) {
	if (!e) return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&e->mu);
	int done = e->completed >= e->recorded;
	pthread_mutex_unlock(&e->mu);
	return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

API CUresult cuEventSynchronize(CUevent e) {
	if (!e) return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&e->mu);
	uint64_t want = e->recorded;
	while (e->completed < want) pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
	return CUDA_SUCCESS;
}

API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
	if (!start || !end) return CUDA_ERROR_INVALID_HANDLE;
	if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
	if (cuEventQuery(start) != CUDA_SUCCESS || cuEventQuery(end) != CUDA_SUCCESS) return CUDA_ERROR_NOT_READY;
	if (!start->completed || !end->completed) return CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)((double)(end->when - start->when) / 1e6);
	return CUDA_SUCCESS;
}

API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
	(void)flags;
	if (!e) return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&e->mu);
	uint64_t gen = e->recorded;
	pthread_mutex_unlock(&e->mu);
	return push(s, (struct op){.kind = OP_WAIT, .ev = e, .gen = gen});
}

// ---- modules and kernels: gnnprof's own, compiled in ----

struct CUmod_st {
	char *ptx;
};

static void jit_log(unsigned n, CUjit_option *opts, void **vals, const char *msg) {
	for (unsigned i = 0; i < n; i++) {
		if (opts[i] != CU_JIT_ERROR_LOG_BUFFER) continue;
		for (unsigned j = 0; j < n; j++)
			if (opts[j] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES && (size_t)(uintptr_t)vals[j] > 0)
				snprintf(vals[i], (size_t)(uintptr_t)vals[j], "%s", msg);
	}
}

API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, CUjit_option *opts, void **vals) {
	if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
	const char *ptx = image;
	if (!strstr(ptx, ".entry ")) {
		jit_log(n, opts, vals, "fake CUDA driver: no .entry in this PTX");
		return CUDA_ERROR_INVALID_PTX;
	}
	struct CUmod_st *mod = malloc(sizeof *mod);
	mod->ptx = strdup(ptx);
	*m = mod;
	return CUDA_SUCCESS;
}

API CUresult cuModuleUnload(CUmodule m) {
	if (!m) return CUDA_ERROR_INVALID_HANDLE;
	free(m->ptx);
	free(m);
	return CUDA_SUCCESS;
}

API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
	if (!m || !name) return CUDA_ERROR_INVALID_HANDLE;
	char entry[256];
	snprintf(entry, sizeof entry, ".entry %s(", name);
	const struct fake_kernel *k = fakecuda_find_kernel(name);
	if (!strstr(m->ptx, entry) || !k) return CUDA_ERROR_NOT_FOUND;
	*f = (CUfunction)k;
	return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, CUstream s, void **params, void **extra) {
	if (!f) return CUDA_ERROR_INVALID_HANDLE;
	if (extra || shared > 48 * 1024 || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	const struct fake_kernel *k = (const struct fake_kernel *)f;
	const size_t *sizes;
	int np = fakecuda_kernel_params(k, &sizes);
	struct launch *l = calloc(1, sizeof *l);
	l->k = k;
	l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz;
	l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
	for (int i = 0; i < np; i++) {
		memcpy(&l->slots[i], params[i], sizes[i]);
		l->params[i] = &l->slots[i];
	}
	CUresult r = push(s, (struct op){.kind = OP_KERNEL, .launch = l});
	if (r != CUDA_SUCCESS) free(l);
	return r;
}
