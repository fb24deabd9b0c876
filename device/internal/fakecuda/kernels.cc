// The fake driver's kernels: gnnprof's CUDA kernels (device/cuda/kernels.cu), compiled for the
// host with the few CUDA built-ins they use defined here, so that tests without a GPU run the
// kernels' own code through the driver API (module load, launch, parameters, streams).
//
// A launch runs its blocks one after another; a block's threads are coroutines (ucontext) on the
// stream's thread, resumed in turn. __syncthreads yields until every thread of the block has
// reached it; a warp shuffle writes its value, yields, reads its partner's and yields again, so
// a round of the block's threads is one step of every warp. The kernels run one at a time (their
// shared arrays are static here).
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <algorithm>
#include <type_traits>
#include <utility>

using std::max;
using std::min;

struct dim3 {
	unsigned x = 1, y = 1, z = 1;
};

static dim3 threadIdx, blockIdx, blockDim, gridDim;

// The block's coroutines.
static ucontext_t scheduler;
static ucontext_t *threads;
static int current;

static void yield() { swapcontext(&threads[current], &scheduler); }

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict

static void __syncthreads() { yield(); }

static float shuffle_slots[1024];

static float __shfl_xor_sync(unsigned, float v, int offset) {
	shuffle_slots[current] = v;
	yield();
	float got = shuffle_slots[current ^ offset];
	yield();
	return got;
}

static pthread_mutex_t atomic_mu = PTHREAD_MUTEX_INITIALIZER;

template <typename T> static T atomicAdd(T *p, T v) {
	pthread_mutex_lock(&atomic_mu);
	T old = *p;
	*p = old + v;
	pthread_mutex_unlock(&atomic_mu);
	return old;
}

#define __expf expf
static float __fmul_rn(float a, float b) { return a * b; }
static float __fadd_rn(float a, float b) { return a + b; }

#include "../../cuda/kernels.cu"

// ---- the kernel table ----

typedef void (*runner)(void **params);

struct fake_kernel {
	const char *name;
	runner run;
	int nparams;
	size_t sizes[32];
};

template <typename... A, size_t... I> static void call(void (*f)(A...), void **p, std::index_sequence<I...>) {
	f(*static_cast<std::remove_cv_t<A> *>(p[I])...);
}

template <typename... A> static constexpr fake_kernel describe(const char *name, void (*)(A...), runner run) {
	fake_kernel k{name, run, (int)sizeof...(A), {}};
	size_t sizes[] = {sizeof(A)..., 0};
	for (size_t i = 0; i < sizeof...(A); i++) k.sizes[i] = sizes[i];
	return k;
}

#define KERNEL(f) describe(#f, f, [](void **p) { call(f, p, std::make_index_sequence<kernel_arity(f)>{}); })

template <typename... A> static constexpr size_t kernel_arity(void (*)(A...)) { return sizeof...(A); }

static const fake_kernel kernels[] = {
    KERNEL(gemm),           KERNEL(spmm),          KERNEL(spmm_t_scatter),       KERNEL(gather_rows),
    KERNEL(scatter_add_rows), KERNEL(add_bias),    KERNEL(col_sums),             KERNEL(axpby),
    KERNEL(relu),           KERNEL(relu_backward), KERNEL(elu),                  KERNEL(elu_backward),
    KERNEL(dropout),        KERNEL(gat_softmax),   KERNEL(gat_softmax_backward), KERNEL(log_softmax),
    KERNEL(log_softmax_backward), KERNEL(cross_entropy), KERNEL(adam),
};

extern "C" const fake_kernel *fakecuda_find_kernel(const char *name) {
	for (const fake_kernel &k : kernels)
		if (strcmp(k.name, name) == 0) return &k;
	return nullptr;
}

extern "C" int fakecuda_kernel_params(const fake_kernel *k, const size_t **sizes) {
	*sizes = k->sizes;
	return k->nparams;
}

// ---- running a launch ----

static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;
static const fake_kernel *running;
static void **running_params;
static char *finished;

static void thread_main() {
	running->run(running_params);
	finished[current] = 1;
}

enum { stack_size = 128 << 10 };

extern "C" void fakecuda_run(const fake_kernel *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, void **params) {
	pthread_mutex_lock(&run_mu);
	int n = (int)(bx * by * bz);
	threads = (ucontext_t *)calloc(n, sizeof *threads);
	finished = (char *)calloc(n, 1);
	char *stacks = (char *)malloc((size_t)n * stack_size);
	running = k;
	running_params = params;
	gridDim = dim3{gx, gy, gz};
	blockDim = dim3{bx, by, bz};
	for (unsigned z = 0; z < gz; z++)
		for (unsigned y = 0; y < gy; y++)
			for (unsigned x = 0; x < gx; x++) {
				blockIdx = dim3{x, y, z};
				for (int t = 0; t < n; t++) {
					getcontext(&threads[t]);
					threads[t].uc_stack.ss_sp = stacks + (size_t)t * stack_size;
					threads[t].uc_stack.ss_size = stack_size;
					threads[t].uc_link = &scheduler;
					makecontext(&threads[t], thread_main, 0);
					finished[t] = 0;
				}
				for (int left = n; left > 0;) {
					left = 0;
					for (int t = 0; t < n; t++) {
						if (finished[t]) continue;
						current = t;
						threadIdx = dim3{t % bx, (t / bx) % by, t / (bx * by)};
						swapcontext(&scheduler, &threads[t]);
						left += !finished[t];
					}
				}
			}
	free(stacks);
	free(finished);
	free(threads);
	pthread_mutex_unlock(&run_mu);
}
