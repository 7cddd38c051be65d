// single_shift.h: the shift of single-precision data, the same on every
// engine.  Single precision stores float(x - shift), with shift the column
// means of up to 4096 evenly spaced rows, so that data far from the origin
// (iris + 1e8) keeps its float resolution.  Plain C++ (single_stored is
// also a device function where nvcc compiles it).
#ifndef GPUKMEANS_SINGLE_SHIFT_H
#define GPUKMEANS_SINGLE_SHIFT_H

// (compiled by nvcc too: the device's conversion kernels call it)
#ifdef __CUDACC__
#define GK_HOST_DEVICE __host__ __device__
#else
#define GK_HOST_DEVICE
#endif

namespace gk {

// The value single precision stores for v in a column shifted by `shift`:
// the double difference rounded to the nearest float.  Every engine, every
// host copy of stored values and the device's conversion compute it here.
GK_HOST_DEVICE inline float single_stored(double v, double shift) { return static_cast<float>(v - shift); }

// The rows the shift is the mean of: row (r * n) / m for r < m = min(n, 4096).
inline long long single_shift_count(long long n) { return n < 4096 ? n : 4096; }
inline long long single_shift_row(long long r, long long n) { return (r * n) / single_shift_count(n); }

// out[j] = mean of v[r + ld * j] over r < m: the shift from the m rows
// above, held in a matrix with ld rows between its columns.
inline void single_shift_mean(const double* v, long long m, long long ld, int d, double* out) {
  for (int j = 0; j < d; ++j) {
    double sum = 0;
    for (long long r = 0; r < m; ++r) sum += v[r + ld * (long long)j];
    out[j] = sum / (double)m;
  }
}

// out[j] = mean of x[(r * n) / m, j] over r < m = min(n, 4096).
inline void single_shift(const double* x, long long n, int d, double* out) {
  const long long m = single_shift_count(n);
  for (int j = 0; j < d; ++j) {
    double sum = 0;
    for (long long r = 0; r < m; ++r) sum += x[single_shift_row(r, n) + n * (long long)j];
    out[j] = sum / (double)m;
  }
}

}  // namespace gk

#endif
