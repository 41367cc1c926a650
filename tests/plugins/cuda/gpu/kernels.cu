// Test kernels of the gpu suite. kernels.ptx is generated from this file, once, with
//   /usr/local/cuda/bin/nvcc -ptx -arch=sm_80 kernels.cu -o kernels.ptx
// and checked in, so the suite builds without nvcc.

extern "C" __global__ void vadd(const float* a, const float* b, float* c, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Each block sums blockDim.x * items consecutive elements through dynamic shared memory
// (blockDim.x * items must be a power of two).
extern "C" __global__ void block_sum(const float* in, float* out, unsigned long long n, unsigned items) {
    extern __shared__ float s[];
    const unsigned t = threadIdx.x, bs = blockDim.x;
    const unsigned long long base = (unsigned long long)blockIdx.x * bs * items;
    for (unsigned k = 0; k < items; ++k) {
        unsigned long long i = base + (unsigned long long)k * bs + t;
        s[k * bs + t] = i < n ? in[i] : 0.0f;
    }
    __syncthreads();
    for (unsigned w = bs * items / 2; w > 0; w >>= 1) {
        for (unsigned j = t; j < w; j += bs) s[j] += s[j + w];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// Mixed scalar widths: y[i] = a * x[i] + y[i] + bias, for i < n.
extern "C" __global__ void axpy_f64(double a, const double* x, double* y, int n, float bias) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] + (double)bias;
}

// Two-dimensional: m[y * w + x] += v + x * 1000 + y.
extern "C" __global__ void add2d(float* m, unsigned w, unsigned h, float v) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) m[y * w + x] += v + (float)x * 1000.0f + (float)y;
}

// At most 256 threads per block: launches above it must be refused.
extern "C" __global__ void __launch_bounds__(256) bounded(float* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

// 32 KiB of static shared memory, to check the static + dynamic limit.
extern "C" __global__ void big_static(float* out) {
    __shared__ float s[8192];
    for (unsigned k = threadIdx.x; k < 8192; k += blockDim.x) s[k] = (float)k;
    __syncthreads();
    out[threadIdx.x] = s[8191 - threadIdx.x];
}

// Does nothing: measures launch overhead.
extern "C" __global__ void empty() {}
