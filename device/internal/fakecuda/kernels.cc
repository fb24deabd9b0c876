// The fake driver's kernels: gnnprof's CUDA kernels (device/cuda/kernels.cu), compiled for the
// host with the few CUDA built-ins they use defined here, so that tests without a GPU run the
// kernels' own code through the driver API (module load, launch, parameters, streams).
//
// A launch runs its blocks one after another. The threads of a kernel that synchronises its block
// or shuffles within warps (marked so in the table below) are coroutines on the
// stream's thread, resumed in turn: __syncthreads yields until every thread of the block has
// reached it; a warp shuffle writes its value, yields, reads its partner's and yields again, so a
// round of the block's threads is one step of every warp. Other kernels' threads simply run one
// after another (a thread of theirs that yields aborts the process: mark its kernel). The kernels
// run one at a time (their shared arrays are static here).
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

// The block's coroutines. On x86-64 a switch saves the callee-saved registers on the stack and
// swaps stack pointers (ucontext's swapcontext makes a system call for the signal mask at every
// switch, which made the tests take seconds); elsewhere, ucontext.
static int current;
static bool cooperative; // the running kernel's threads are coroutines

#if defined(__x86_64__)
extern "C" void fake_switch(void **save_sp, void *next_sp);
asm(R"(
.text
.globl fake_switch
.type fake_switch,@function
fake_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
.size fake_switch, .-fake_switch
)");

static void *scheduler_sp;
static void **thread_sp;

static void switch_to_scheduler() { fake_switch(&thread_sp[current], scheduler_sp); }
static void switch_to_thread(int t) { fake_switch(&scheduler_sp, thread_sp[t]); }
static void thread_main();

// start_thread lays out stack so that the first switch to it returns into thread_main.
static void start_thread(int t, char *stack, size_t size) {
	uintptr_t top = ((uintptr_t)(stack + size)) & ~(uintptr_t)15;
	void **sp = (void **)(top - 16);
	sp[0] = (void *)thread_main; // the return address of the first switch: after it, rsp ≡ 8 (mod 16)
	sp -= 6;                     // the six saved registers
	for (int i = 0; i < 6; i++) sp[i] = nullptr;
	thread_sp[t] = sp;
}
static void alloc_threads(int n) { thread_sp = (void **)calloc(n, sizeof *thread_sp); }
static void free_threads() { free(thread_sp); }
#else
static ucontext_t scheduler;
static ucontext_t *threads;
static void switch_to_scheduler() { swapcontext(&threads[current], &scheduler); }
static void switch_to_thread(int t) { swapcontext(&scheduler, &threads[t]); }
static void thread_main();
static void start_thread(int t, char *stack, size_t size) {
	getcontext(&threads[t]);
	threads[t].uc_stack.ss_sp = stack;
	threads[t].uc_stack.ss_size = size;
	threads[t].uc_link = &scheduler;
	makecontext(&threads[t], thread_main, 0);
}
static void alloc_threads(int n) { threads = (ucontext_t *)calloc(n, sizeof *threads); }
static void free_threads() { free(threads); }
#endif

static void yield() {
	if (!cooperative) abort(); // a kernel that synchronises is missing its mark in the table
	switch_to_scheduler();
}

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
	bool cooperative;
	int nparams;
	size_t sizes[32];
};

template <typename... A, size_t... I> static void call(void (*f)(A...), void **p, std::index_sequence<I...>) {
	f(*static_cast<std::remove_cv_t<A> *>(p[I])...);
}

template <typename... A> static constexpr fake_kernel describe(const char *name, void (*)(A...), runner run, bool coop) {
	fake_kernel k{name, run, coop, (int)sizeof...(A), {}};
	size_t sizes[] = {sizeof(A)..., 0};
	for (size_t i = 0; i < sizeof...(A); i++) k.sizes[i] = sizes[i];
	return k;
}

#define KERNEL_RUNNER(f) [](void **p) { call(f, p, std::make_index_sequence<kernel_arity(f)>{}); }
#define KERNEL(f) describe(#f, f, KERNEL_RUNNER(f), false)
#define COOPERATIVE(f) describe(#f, f, KERNEL_RUNNER(f), true) // uses __syncthreads or shuffles

template <typename... A> static constexpr size_t kernel_arity(void (*)(A...)) { return sizeof...(A); }

static const fake_kernel kernels[] = {
    COOPERATIVE(gemm),        KERNEL(spmm),          KERNEL(spmm_t_scatter),
    KERNEL(gather_rows),      KERNEL(scatter_add_rows), KERNEL(add_bias),
    KERNEL(col_sums),         KERNEL(axpby),         KERNEL(relu),
    KERNEL(relu_backward),    KERNEL(elu),           KERNEL(elu_backward),
    KERNEL(dropout),          COOPERATIVE(gat_softmax), COOPERATIVE(gat_softmax_backward),
    COOPERATIVE(log_softmax), COOPERATIVE(log_softmax_backward), KERNEL(cross_entropy),
    KERNEL(adam),             KERNEL(gat_project),   KERNEL(gat_attn_dropout),
    KERNEL(gat_aggregate),    KERNEL(gat_edge_dot),  KERNEL(gat_scatter),
    KERNEL(head_mean),        KERNEL(head_mean_backward), KERNEL(gat_project_backward),
    KERNEL(gat_att_grad),     KERNEL(sum_squares),   KERNEL(clip_scale),
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
	switch_to_scheduler(); // never resumed
	abort();
}

enum { stack_size = 64 << 10 };

// Coroutine state, kept from launch to launch.
static char *stacks;
static int nthreads_max;

static void set_thread(int t) {
	current = t;
	threadIdx = dim3{t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)};
}

extern "C" void fakecuda_run(const fake_kernel *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, void **params) {
	pthread_mutex_lock(&run_mu);
	int n = (int)(bx * by * bz);
	if (n > nthreads_max) {
		free(stacks);
		free_threads();
		free(finished);
		stacks = (char *)malloc((size_t)n * stack_size);
		alloc_threads(n);
		finished = (char *)calloc(n, 1);
		nthreads_max = n;
	}
	running = k;
	running_params = params;
	cooperative = k->cooperative;
	gridDim = dim3{gx, gy, gz};
	blockDim = dim3{bx, by, bz};
	for (unsigned z = 0; z < gz; z++)
		for (unsigned y = 0; y < gy; y++)
			for (unsigned x = 0; x < gx; x++) {
				blockIdx = dim3{x, y, z};
				if (!cooperative) {
					for (int t = 0; t < n; t++) {
						set_thread(t);
						k->run(params);
					}
					continue;
				}
				for (int t = 0; t < n; t++) {
					start_thread(t, stacks + (size_t)t * stack_size, stack_size);
					finished[t] = 0;
				}
				for (int left = n; left > 0;) {
					left = 0;
					for (int t = 0; t < n; t++) {
						if (finished[t]) continue;
						set_thread(t);
						switch_to_thread(t);
						left += !finished[t];
					}
				}
			}
	pthread_mutex_unlock(&run_mu);
}
