// gnnprof's GPU kernels: what the trainers' layers run, in float32, row-major, on CSR graphs
// (indptr int64, indices int32, optional values). Compiled to PTX for compute_80 (scripts/cuda
// ptx), committed as kernels.ptx and embedded; the driver JIT-compiles it for the GPU at hand.
// Each kernel matches a CPU kernel of package nn (the tests compare them); the dropout mask is
// the CPU's own hash, so both drop the same elements for a seed.

#include <stdint.h>

#define FULL_MASK 0xffffffffu

// ---- GEMM: C = alpha·op(A)·op(B) + beta·C, op transposing when its flag is set ----
//
// A 64×64 tile of C per block of 256 threads, each thread computing a 4×4 patch; A's and B's
// tiles pass through shared memory 16 columns of k at a time. With gridDim.z > 1 the blocks of
// each z split k between them and add their parts into C atomically (split-K, for a small C over
// a long k, such as a weight's gradient over all a graph's nodes): the caller has already scaled C
// by beta.

#define TM 64
#define TN 64
#define TK 16

extern "C" __global__ void gemm(int m, int n, int k, float alpha, const float *__restrict__ a, int lda, int transA,
                                const float *__restrict__ b, int ldb, int transB, float beta, float *__restrict__ c,
                                int ldc) {
	__shared__ float as[TK][TM + 4];
	__shared__ float bs[TK][TN + 4];
	const int tid = threadIdx.x;
	const int tx = tid % 16, ty = tid / 16; // the thread's 4×4 patch: rows ty*4.., columns tx*4..
	const int row0 = blockIdx.y * TM, col0 = blockIdx.x * TN;
	const int chunk = ((k + gridDim.z - 1) / gridDim.z + TK - 1) / TK * TK;
	const int kbegin = blockIdx.z * chunk, kend = min(k, kbegin + chunk);
	float acc[4][4] = {};
	for (int k0 = kbegin; k0 < kend; k0 += TK) {
		// Load A's tile (TM×TK) and B's (TK×TN): 1024 elements each, 4 per thread.
		for (int l = tid; l < TM * TK; l += 256) {
			int r, kk;
			if (transA) { r = l % TM; kk = l / TM; } else { kk = l % TK; r = l / TK; }
			int gr = row0 + r, gk = k0 + kk;
			float v = 0;
			if (gr < m && gk < kend) v = transA ? a[(size_t)gk * lda + gr] : a[(size_t)gr * lda + gk];
			as[kk][r] = v;
		}
		for (int l = tid; l < TK * TN; l += 256) {
			int kk, cc;
			if (transB) { kk = l % TK; cc = l / TK; } else { cc = l % TN; kk = l / TN; }
			int gk = k0 + kk, gc = col0 + cc;
			float v = 0;
			if (gk < kend && gc < n) v = transB ? b[(size_t)gc * ldb + gk] : b[(size_t)gk * ldb + gc];
			bs[kk][cc] = v;
		}
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < TK; kk++) {
			float ar[4], br[4];
#pragma unroll
			for (int i = 0; i < 4; i++) ar[i] = as[kk][ty * 4 + i];
#pragma unroll
			for (int j = 0; j < 4; j++) br[j] = bs[kk][tx * 4 + j];
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++) acc[i][j] += ar[i] * br[j];
		}
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < 4; i++) {
		int r = row0 + ty * 4 + i;
		if (r >= m) continue;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			int cc = col0 + tx * 4 + j;
			if (cc >= n) continue;
			float *p = &c[(size_t)r * ldc + cc];
			if (gridDim.z > 1)
				atomicAdd(p, alpha * acc[i][j]);
			else
				*p = beta == 0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *p;
		}
	}
}

// ---- sparse × dense ----

// spmm: y = s·x (add: y += s·x), one warp per row of s, its lanes across x's f columns.
extern "C" __global__ void spmm(int rows, int f, const int64_t *__restrict__ indptr, const int32_t *__restrict__ indices,
                                const float *__restrict__ val, const float *__restrict__ x, float *__restrict__ y, int add) {
	int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (warp >= rows) return;
	int64_t lo = indptr[warp], hi = indptr[warp + 1];
	for (int c = lane; c < f; c += 32) {
		float acc = 0;
		for (int64_t e = lo; e < hi; e++) {
			float w = val ? val[e] : 1.0f;
			acc += w * x[(size_t)indices[e] * f + c];
		}
		float *p = &y[(size_t)warp * f + c];
		*p = add ? *p + acc : acc;
	}
}

// spmm_t_scatter: y += sᵀ·x by scattering each row of s: y[indices[e]] += val[e]·x[row] (atomic
// adds: rows of y receive from many rows of s at once). Zero y first for y = sᵀ·x.
extern "C" __global__ void spmm_t_scatter(int rows, int f, const int64_t *__restrict__ indptr,
                                          const int32_t *__restrict__ indices, const float *__restrict__ val,
                                          const float *__restrict__ x, float *__restrict__ y) {
	int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (warp >= rows) return;
	int64_t lo = indptr[warp], hi = indptr[warp + 1];
	for (int64_t e = lo; e < hi; e++) {
		float w = val ? val[e] : 1.0f;
		float *dst = &y[(size_t)indices[e] * f];
		const float *src = &x[(size_t)warp * f];
		for (int c = lane; c < f; c += 32) atomicAdd(&dst[c], w * src[c]);
	}
}

// ---- rows ----

// gather_rows: out[r] = x[idx[r]].
extern "C" __global__ void gather_rows(int n, int f, const int32_t *__restrict__ idx, const float *__restrict__ x,
                                       float *__restrict__ out) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t)n * f) return;
	size_t r = i / f, c = i % f;
	out[i] = x[(size_t)idx[r] * f + c];
}

// scatter_add_rows: dst[idx[r]] += src[r] (indices may repeat: atomic adds).
extern "C" __global__ void scatter_add_rows(int n, int f, const int32_t *__restrict__ idx, const float *__restrict__ src,
                                            float *__restrict__ dst) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t)n * f) return;
	size_t r = i / f, c = i % f;
	atomicAdd(&dst[(size_t)idx[r] * f + c], src[i]);
}

// add_bias: m[r][c] += bias[c].
extern "C" __global__ void add_bias(int rows, int f, const float *__restrict__ bias, float *__restrict__ m) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (size_t)rows * f) m[i] += bias[i % f];
}

// col_sums: acc[c] += Σ_r m[r][c] (a bias's gradient): each block sums a band of rows per column.
extern "C" __global__ void col_sums(int rows, int f, const float *__restrict__ m, float *__restrict__ acc) {
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= f) return;
	int band = (rows + gridDim.y - 1) / gridDim.y;
	int lo = blockIdx.y * band, hi = min(rows, lo + band);
	float s = 0;
	for (int r = lo; r < hi; r++) s += m[(size_t)r * f + c];
	if (lo < hi) atomicAdd(&acc[c], s);
}

// axpby: y = a·x + b·y, a zero factor ignoring its operand (even a NaN).
extern "C" __global__ void axpby(long long n, float a, const float *__restrict__ x, float b, float *__restrict__ y) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (size_t)n) y[i] = (a == 0 ? 0 : a * x[i]) + (b == 0 ? 0 : b * y[i]);
}

// ---- activations ----

extern "C" __global__ void relu(long long n, const float *__restrict__ x, float *__restrict__ y) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (size_t)n) y[i] = fmaxf(x[i], 0);
}

// relu_backward: dx = dy where the forward output y > 0, else 0.
extern "C" __global__ void relu_backward(long long n, const float *__restrict__ y, const float *__restrict__ dy,
                                         float *__restrict__ dx) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (size_t)n) dx[i] = y[i] > 0 ? dy[i] : 0;
}

extern "C" __global__ void elu(long long n, float alpha, const float *__restrict__ x, float *__restrict__ y) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (size_t)n) {
		float v = x[i];
		y[i] = v > 0 ? v : alpha * expm1f(v);
	}
}

// elu_backward from the forward output y: dy where y > 0, dy·(y + alpha) elsewhere.
extern "C" __global__ void elu_backward(long long n, float alpha, const float *__restrict__ y,
                                        const float *__restrict__ dy, float *__restrict__ dx) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (size_t)n) dx[i] = y[i] > 0 ? dy[i] : dy[i] * (y[i] + alpha);
}

// ---- dropout: nn's counter-based mask ----

__device__ __forceinline__ uint64_t mix64(uint64_t z) {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// dropout: y[i] = x[i]·scale where element i's 16 mask bits ≥ thr, else 0. The same mask drops
// the gradient in the backward pass (x = dy). Element i's bits are word i/4's hash, 16 bits per
// element, as nn's keep.
extern "C" __global__ void dropout(long long n, unsigned long long seed, unsigned int thr, float scale,
                                   const float *__restrict__ x, float *__restrict__ y) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t)n) return;
	uint64_t z = mix64(seed + (uint64_t)(i >> 2) * 0x9e3779b97f4a7c15ull);
	unsigned int h = (unsigned int)(z >> (16 * (i & 3))) & 0xffffu;
	y[i] = h >= thr ? x[i] * scale : 0.0f;
}

// ---- GAT edge softmax ----

__device__ __forceinline__ float warp_max(float v) {
	for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
	return v;
}

__device__ __forceinline__ float warp_sum(float v) {
	for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL_MASK, v, o);
	return v;
}

// gat_softmax: alpha[e·H + h] = softmax over row i's edges e (sources j = indices[e]) of
// LeakyReLU(a_src[j·H + h] + a_dst[i·H + h]). One warp per row, its lanes across the edges.
extern "C" __global__ void gat_softmax(int rows, int heads, float slope, const int64_t *__restrict__ indptr,
                                       const int32_t *__restrict__ indices, const float *__restrict__ a_src,
                                       const float *__restrict__ a_dst, float *__restrict__ alpha) {
	int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (i >= rows) return;
	int64_t lo = indptr[i], hi = indptr[i + 1];
	for (int h = 0; h < heads; h++) {
		float ad = a_dst[(size_t)i * heads + h], mx = -INFINITY;
		for (int64_t e = lo + lane; e < hi; e += 32) {
			float v = a_src[(size_t)indices[e] * heads + h] + ad;
			v = v < 0 ? v * slope : v;
			alpha[e * heads + h] = v;
			mx = fmaxf(mx, v);
		}
		mx = warp_max(mx);
		float sum = 0;
		for (int64_t e = lo + lane; e < hi; e += 32) {
			float v = __expf(alpha[e * heads + h] - mx);
			alpha[e * heads + h] = v;
			sum += v;
		}
		float inv = 1 / warp_sum(sum);
		for (int64_t e = lo + lane; e < hi; e += 32) alpha[e * heads + h] *= inv;
	}
}

// gat_softmax_backward: from the weights alpha and their gradient dalpha, the gradient of the
// scores through the softmax and the LeakyReLU, summed into d_dst[i·H + h] (row i's edges) and
// d_src[j·H + h] (atomic: a source feeds many rows). d_src must be zeroed first.
extern "C" __global__ void gat_softmax_backward(int rows, int heads, float slope, const int64_t *__restrict__ indptr,
                                                const int32_t *__restrict__ indices, const float *__restrict__ a_src,
                                                const float *__restrict__ a_dst, const float *__restrict__ alpha,
                                                const float *__restrict__ dalpha, float *__restrict__ d_src,
                                                float *__restrict__ d_dst) {
	int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (i >= rows) return;
	int64_t lo = indptr[i], hi = indptr[i + 1];
	for (int h = 0; h < heads; h++) {
		float dot = 0;
		for (int64_t e = lo + lane; e < hi; e += 32) dot += alpha[e * heads + h] * dalpha[e * heads + h];
		dot = warp_sum(dot);
		float ad = a_dst[(size_t)i * heads + h], row = 0;
		for (int64_t e = lo + lane; e < hi; e += 32) {
			int j = indices[e];
			float s = a_src[(size_t)j * heads + h] + ad;
			float g = alpha[e * heads + h] * (dalpha[e * heads + h] - dot) * (s > 0 ? 1.0f : slope);
			atomicAdd(&d_src[(size_t)j * heads + h], g);
			row += g;
		}
		row = warp_sum(row);
		if (lane == 0) d_dst[(size_t)i * heads + h] = row;
	}
}

// ---- GAT's layer around the edge softmax (nn's GATReorganized form) ----
//
// h is the projected features, ns × H·C (head hd's channels at hd·C); the attention is kept
// edge-major, alpha[e·H + hd].

// gat_project: a_src[j·H + hd] = ⟨h_j's head hd, att_src[hd]⟩ for every node j, and a_dst for the
// first rows_dst (the targets). One thread per node and head.
extern "C" __global__ void gat_project(int rows_src, int rows_dst, int heads, int c, const float *__restrict__ h,
                                       const float *__restrict__ att_src, const float *__restrict__ att_dst,
                                       float *__restrict__ a_src, float *__restrict__ a_dst) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t)rows_src * heads) return;
	size_t j = i / heads;
	int hd = (int)(i % heads);
	const float *row = &h[j * heads * c + (size_t)hd * c];
	float s = 0, d = 0;
	for (int k = 0; k < c; k++) {
		s += row[k] * att_src[hd * c + k];
		d += row[k] * att_dst[hd * c + k];
	}
	a_src[i] = s;
	if (j < (size_t)rows_dst) a_dst[i] = d;
}

// gat_attn_dropout: y = x (edge-major, nnz × H) with nn's attention dropout: edge e, head hd is
// kept by the mask bits of element hd·nnz + e (nn's GAT indexes its masks head-major).
extern "C" __global__ void gat_attn_dropout(long long nnz, int heads, unsigned long long seed, unsigned int thr,
                                            float scale, const float *__restrict__ x, float *__restrict__ y) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t)nnz * heads) return;
	size_t m = (i % heads) * (size_t)nnz + i / heads;
	uint64_t z = mix64(seed + (uint64_t)(m >> 2) * 0x9e3779b97f4a7c15ull);
	unsigned int b = (unsigned int)(z >> (16 * (m & 3))) & 0xffffu;
	y[i] = b >= thr ? x[i] * scale : 0.0f;
}

// gat_aggregate: out[i, hd·C + k] = Σ over row i's edges e (from j) of alpha[e·H + hd]·h[j, hd·C + k].
// One thread per output element, adding in edge order.
extern "C" __global__ void gat_aggregate(int rows, int heads, int c, const int64_t *__restrict__ indptr,
                                         const int32_t *__restrict__ indices, const float *__restrict__ alpha,
                                         const float *__restrict__ h, float *__restrict__ out) {
	size_t hc = (size_t)heads * c, t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (size_t)rows * hc) return;
	size_t i = t / hc, k = t % hc;
	int hd = (int)(k / c);
	float s = 0;
	for (int64_t e = indptr[i]; e < indptr[i + 1]; e++) s += alpha[e * heads + hd] * h[(size_t)indices[e] * hc + k];
	out[t] = s;
}

// gat_edge_dot: d_alpha[e·H + hd] = ⟨d_out[i, head hd], h[j, head hd]⟩ for row i's edges e (from j):
// the gradient of the aggregated attention. One thread per target row and head.
extern "C" __global__ void gat_edge_dot(int rows, int heads, int c, const int64_t *__restrict__ indptr,
                                        const int32_t *__restrict__ indices, const float *__restrict__ d_out,
                                        const float *__restrict__ h, float *__restrict__ d_alpha) {
	size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (size_t)rows * heads) return;
	size_t i = t / heads, hc = (size_t)heads * c;
	int hd = (int)(t % heads);
	const float *g = &d_out[i * hc + (size_t)hd * c];
	for (int64_t e = indptr[i]; e < indptr[i + 1]; e++) {
		const float *x = &h[(size_t)indices[e] * hc + (size_t)hd * c];
		float s = 0;
		for (int k = 0; k < c; k++) s += g[k] * x[k];
		d_alpha[e * heads + hd] = s;
	}
}

// gat_scatter: d_h[j, hd·C + k] += alpha[e·H + hd]·d_out[i, hd·C + k] over every edge e (i ← j):
// the aggregation's transpose, atomic (a source feeds many rows). One thread per target element.
extern "C" __global__ void gat_scatter(int rows, int heads, int c, const int64_t *__restrict__ indptr,
                                       const int32_t *__restrict__ indices, const float *__restrict__ alpha,
                                       const float *__restrict__ d_out, float *__restrict__ d_h) {
	size_t hc = (size_t)heads * c, t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (size_t)rows * hc) return;
	size_t i = t / hc, k = t % hc;
	int hd = (int)(k / c);
	float g = d_out[t];
	for (int64_t e = indptr[i]; e < indptr[i + 1]; e++)
		atomicAdd(&d_h[(size_t)indices[e] * hc + k], alpha[e * heads + hd] * g);
}

// head_mean: out[i, k] = Σ_hd in[i, hd·C + k]/H (GAT's averaged heads), adding as nn does.
extern "C" __global__ void head_mean(int rows, int heads, int c, const float *__restrict__ in, float *__restrict__ out) {
	size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (size_t)rows * c) return;
	size_t i = t / c, k = t % c;
	float inv = 1.0f / heads, s = 0;
	for (int hd = 0; hd < heads; hd++) s += inv * in[(i * heads + hd) * c + k];
	out[t] = s;
}

// head_mean_backward: d_in[i, hd·C + k] = d_out[i, k]/H.
extern "C" __global__ void head_mean_backward(int rows, int heads, int c, const float *__restrict__ d_out,
                                              float *__restrict__ d_in) {
	size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (size_t)rows * heads * c) return;
	size_t i = t / ((size_t)heads * c), k = t % c;
	d_in[t] = d_out[i * c + k] * (1.0f / heads);
}

// gat_project_backward: d_h[j, hd·C + k] += d_src[j·H + hd]·att_src[hd·C + k], and for the first
// rows_dst nodes + d_dst[j·H + hd]·att_dst[hd·C + k]. One thread per element of d_h.
extern "C" __global__ void gat_project_backward(int rows_src, int rows_dst, int heads, int c,
                                                const float *__restrict__ att_src, const float *__restrict__ att_dst,
                                                const float *__restrict__ d_src, const float *__restrict__ d_dst,
                                                float *__restrict__ d_h) {
	size_t hc = (size_t)heads * c, t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (size_t)rows_src * hc) return;
	size_t j = t / hc, k = t % hc;
	int hd = (int)(k / c);
	float g = d_h[t] + d_src[j * heads + hd] * att_src[k];
	if (j < (size_t)rows_dst) g += d_dst[j * heads + hd] * att_dst[k];
	d_h[t] = g;
}

// gat_att_grad: g_src[hd·C + k] += Σ_j d_src[j·H + hd]·h[j, hd·C + k], and g_dst the same over the
// first rows_dst nodes with d_dst: the attention vectors' gradients. A thread per column and band
// of 64 rows (gridDim.y bands), adding its band's sum atomically.
extern "C" __global__ void gat_att_grad(int rows_src, int rows_dst, int heads, int c, const float *__restrict__ h,
                                        const float *__restrict__ d_src, const float *__restrict__ d_dst,
                                        float *__restrict__ g_src, float *__restrict__ g_dst) {
	size_t hc = (size_t)heads * c, k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= hc) return;
	int hd = (int)(k / c);
	int band = (rows_src + gridDim.y - 1) / gridDim.y;
	int lo = blockIdx.y * band, hi = min(rows_src, lo + band);
	float s = 0, d = 0;
	for (int j = lo; j < hi; j++) {
		float x = h[(size_t)j * hc + k];
		s += d_src[(size_t)j * heads + hd] * x;
		if (j < rows_dst) d += d_dst[(size_t)j * heads + hd] * x;
	}
	if (lo < hi) {
		atomicAdd(&g_src[k], s);
		atomicAdd(&g_dst[k], d);
	}
}

// ---- loss ----

// log_softmax: out row r = log softmax(x row r), one warp per row.
extern "C" __global__ void log_softmax(int rows, int f, const float *__restrict__ x, float *__restrict__ out) {
	int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (r >= rows) return;
	const float *xr = &x[(size_t)r * f];
	float mx = -INFINITY;
	for (int c = lane; c < f; c += 32) mx = fmaxf(mx, xr[c]);
	mx = warp_max(mx);
	float s = 0;
	for (int c = lane; c < f; c += 32) s += expf(xr[c] - mx);
	float lse = mx + logf(warp_sum(s));
	for (int c = lane; c < f; c += 32) out[(size_t)r * f + c] = xr[c] - lse;
}

// log_softmax_backward: dx = dy − softmax·Σdy per row, from the forward output logp.
extern "C" __global__ void log_softmax_backward(int rows, int f, const float *__restrict__ logp,
                                                const float *__restrict__ dy, float *__restrict__ dx) {
	int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (r >= rows) return;
	size_t o = (size_t)r * f;
	float s = 0;
	for (int c = lane; c < f; c += 32) s += dy[o + c];
	s = warp_sum(s);
	for (int c = lane; c < f; c += 32) dx[o + c] = dy[o + c] - expf(logp[o + c]) * s;
}

// cross_entropy: for the n target rows rows[k] with labels[rows[k]] and weights w[k] (null:
// 1/n each), loss += −Σ w·logp[row][label] (double, atomic) and grad[row] = w·softmax − w at
// the label. Rows not targeted keep their gradient (zero it first).
extern "C" __global__ void cross_entropy(int n, int f, const int32_t *__restrict__ rows, const int32_t *__restrict__ labels,
                                         const float *__restrict__ weight, const float *__restrict__ logp,
                                         float *__restrict__ grad, double *__restrict__ loss) {
	int k = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (k >= n) return;
	int r = rows[k], y = labels[r];
	float w = weight ? weight[k] : 1.0f / n;
	size_t o = (size_t)r * f;
	for (int c = lane; c < f; c += 32) grad[o + c] = w * expf(logp[o + c]) - (c == y ? w : 0);
	if (lane == 0) atomicAdd(loss, -(double)w * (double)logp[o + y]);
}

// ---- optimizer ----

// sum_squares: *acc += Σ x[i]² (double, atomic; zero it first): the squared norm that gradient
// clipping compares, each thread summing a grid-stride share.
extern "C" __global__ void sum_squares(long long n, const float *__restrict__ x, double *__restrict__ acc) {
	double s = 0;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += (size_t)gridDim.x * blockDim.x)
		s += (double)x[i] * (double)x[i];
	if (s != 0) atomicAdd(acc, s);
}

// clip_scale: scales x by max_norm / (‖x‖ + 1e-6) where ‖x‖ = √*sq exceeds max_norm, as
// torch.nn.utils.clip_grad_norm_ does, without the host reading the norm.
extern "C" __global__ void clip_scale(long long n, float max_norm, const double *__restrict__ sq, float *__restrict__ x) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	double norm = sqrt(*sq);
	if (i >= (size_t)n || norm <= (double)max_norm) return;
	x[i] *= (float)((double)max_norm / (norm + 1e-6));
}

// adam: one Adam step (nn's, weight decay added to the gradient): step_size = lr / (1 − β1ᵗ),
// sqrt_bc2 = √(1 − β2ᵗ).
extern "C" __global__ void adam(long long n, float wd, float beta1, float beta2, float step_size, float sqrt_bc2,
                                float eps, float *__restrict__ w, const float *__restrict__ g, float *__restrict__ m,
                                float *__restrict__ v) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t)n) return;
	float gi = g[i] + __fmul_rn(wd, w[i]);
	float mi = __fadd_rn(__fmul_rn(beta1, m[i]), __fmul_rn(1 - beta1, gi));
	float vi = __fadd_rn(__fmul_rn(beta2, v[i]), __fmul_rn(__fmul_rn(1 - beta2, gi), gi));
	m[i] = mi;
	v[i] = vi;
	w[i] -= step_size * mi / (sqrtf(vi) / sqrt_bc2 + eps);
}
