/* See psk-kernels.h. Built with -ffp-contract=off and without -ffast-math:
 * every a*b and acc+p below is one IEEE float32 operation. */
#include "psk-kernels.h"
#include <string.h>

#if defined(__FAST_MATH__) || defined(__FP_FAST_FMAF)
#error "the psk1 kernels must be built without -ffast-math and without FMA contraction"
#endif

typedef float v8f __attribute__((vector_size(32)));
#define CLONES __attribute__((target_clones("avx2", "default")))

/* macros, not functions: an out-of-line helper between target clones would pass
 * vectors by value across two ABIs */
#define ld8(p) __extension__({ v8f v_; memcpy(&v_, (p), sizeof v_); v_; })
#define st8(p, v) do { v8f s_ = (v); memcpy((p), &s_, sizeof s_); } while (0)
#define splat(x) __extension__({ float x_ = (x); (v8f){ x_, x_, x_, x_, x_, x_, x_, x_ }; })

void psk_canonical_nan(float *out, long n) {
  uint32_t *u = (uint32_t *)out;
  for (long i = 0; i < n; i++) if ((u[i] & 0x7fffffffu) > 0x7f800000u) u[i] = 0x7fc00000u;
}

void psk_pack_transpose(const float *src, float *dst, int rows, int cols) {
  for (int r = 0; r < rows; r++) for (int c = 0; c < cols; c++) dst[(long)c * rows + r] = src[(long)r * cols + c];
}

/* C[i, j] for i in [0, M), j in [0, N): sum over k of A[i*sai + k*sak] * Bp(k, j),
 * Bp packed in panels of 16 columns: panel p holds B[k][16p .. 16p+15] at
 * Bp + (p*K + k)*16 (the last panel zero-padded). */
CLONES static void gemm(int M, int N, int K, const float *A, long sai, long sak, const float *Bp, float *C, long ldc) {
  for (int j0 = 0; j0 < N; j0 += 16) {
    const float *panel = Bp + (long)(j0 / 16) * K * 16;
    int nj = N - j0 < 16 ? N - j0 : 16;
    int i = 0;
    for (; i + 6 <= M; i += 6) {
      const float *a0 = A + (long)i * sai, *a1 = a0 + sai, *a2 = a1 + sai, *a3 = a2 + sai, *a4 = a3 + sai, *a5 = a4 + sai;
      v8f c00 = splat(0), c01 = splat(0), c10 = splat(0), c11 = splat(0), c20 = splat(0), c21 = splat(0);
      v8f c30 = splat(0), c31 = splat(0), c40 = splat(0), c41 = splat(0), c50 = splat(0), c51 = splat(0);
      const float *b = panel;
      for (int k = 0; k < K; k++, b += 16) {
        v8f b0 = ld8(b), b1 = ld8(b + 8);
        long ka = (long)k * sak;
        v8f x;
        x = splat(a0[ka]); c00 = c00 + x * b0; c01 = c01 + x * b1;
        x = splat(a1[ka]); c10 = c10 + x * b0; c11 = c11 + x * b1;
        x = splat(a2[ka]); c20 = c20 + x * b0; c21 = c21 + x * b1;
        x = splat(a3[ka]); c30 = c30 + x * b0; c31 = c31 + x * b1;
        x = splat(a4[ka]); c40 = c40 + x * b0; c41 = c41 + x * b1;
        x = splat(a5[ka]); c50 = c50 + x * b0; c51 = c51 + x * b1;
      }
      float t[6][16];
      st8(t[0], c00); st8(t[0] + 8, c01); st8(t[1], c10); st8(t[1] + 8, c11); st8(t[2], c20); st8(t[2] + 8, c21);
      st8(t[3], c30); st8(t[3] + 8, c31); st8(t[4], c40); st8(t[4] + 8, c41); st8(t[5], c50); st8(t[5] + 8, c51);
      for (int r = 0; r < 6; r++) memcpy(C + (long)(i + r) * ldc + j0, t[r], sizeof(float) * (size_t)nj);
    }
    for (; i < M; i++) {
      const float *a0 = A + (long)i * sai;
      v8f c00 = splat(0), c01 = splat(0);
      const float *b = panel;
      for (int k = 0; k < K; k++, b += 16) {
        v8f x = splat(a0[(long)k * sak]);
        c00 = c00 + x * ld8(b); c01 = c01 + x * ld8(b + 8);
      }
      float t[16];
      st8(t, c00); st8(t + 8, c01);
      memcpy(C + (long)i * ldc + j0, t, sizeof(float) * (size_t)nj);
    }
  }
}

/* Bp as gemm reads it, from B [K,N] (row stride ldb) or, transposed, from Bt [N,K] */
static void pack_panels(const float *B, int K, int N, int transposed, float *Bp) {
  for (int j0 = 0; j0 < N; j0 += 16) {
    float *panel = Bp + (long)(j0 / 16) * K * 16;
    int nj = N - j0 < 16 ? N - j0 : 16;
    for (int k = 0; k < K; k++) {
      float *row = panel + (long)k * 16;
      for (int j = 0; j < nj; j++) row[j] = transposed ? B[(long)(j0 + j) * K + k] : B[(long)k * N + j0 + j];
      for (int j = nj; j < 16; j++) row[j] = 0.0f;
    }
  }
}

long psk_packed_size(int K, int N) { return (long)((N + 15) / 16) * K * 16; }

void psk_pack(const float *b, int bBatch, int K, int N, int tb, float *packed) {
  for (int bt = 0; bt < bBatch; bt++) pack_panels(b + (long)bt * K * N, K, N, tb, packed + (long)bt * psk_packed_size(K, N));
}

void psk_matmul(const float *a, const float *bp, float *out, int batch, int aBatch, int bBatch,
                int M, int N, int K, int ta, const float *bias, int biasLen, int relu,
                int row0, int row1) {
  for (int bt = 0; bt < batch; bt++) {
    int lo = row0 - bt * M, hi = row1 - bt * M;
    if (lo < 0) lo = 0;
    if (hi > M) hi = M;
    if (lo >= hi) continue;
    const float *A = a + (long)(aBatch == 1 ? 0 : bt) * M * K;
    const float *B = bp + (long)(bBatch == 1 ? 0 : bt) * psk_packed_size(K, N);
    float *C = out + (long)bt * M * N;
    long sai = ta ? 1 : K, sak = ta ? M : 1;
    gemm(hi - lo, N, K, A + (long)lo * sai, sai, sak, B, C + (long)lo * N, N);
    for (int i = lo; i < hi; i++) {
      float *c = C + (long)i * N;
      if (bias != NULL) for (int j = 0; j < N; j++) c[j] = c[j] + bias[biasLen == 1 ? 0 : j];
      if (relu) for (int j = 0; j < N; j++) { float v = c[j]; c[j] = v > 0.0f ? v : (v != v ? v : 0.0f); }
      psk_canonical_nan(c, N);
    }
  }
}

static inline int interior(const struct psk_conv *g, int oy, int ox) {
  int y0 = oy * g->sh - g->padTop, x0 = ox * g->sw - g->padLeft;
  return y0 >= 0 && y0 + g->kh <= g->H && x0 >= 0 && x0 + g->kw <= g->W;
}

/* one output pixel, every tap checked against the image */
static inline void conv_pixel(const struct psk_conv *g, const float *x, const float *w, float *o, int bb, int oy, int ox) {
  const int CI = g->CI, CO = g->CO;
  for (int co = 0; co < CO; co++) {
    float acc = 0.0f;
    for (int r = 0; r < g->kh; r++) {
      int iy = oy * g->sh + r - g->padTop;
      if (iy < 0 || iy >= g->H) continue;
      for (int c = 0; c < g->kw; c++) {
        int ix = ox * g->sw + c - g->padLeft;
        if (ix < 0 || ix >= g->W) continue;
        const float *xr = x + (((long)bb * g->H + iy) * g->W + ix) * CI;
        const float *wr = w + (long)(r * g->kw + c) * CI * CO + co;
        for (int ci = 0; ci < CI; ci++) acc = acc + xr[ci] * wr[(long)ci * CO];
      }
    }
    o[co] = acc;
  }
}

CLONES void psk_conv2d(const struct psk_conv *g, const float *x, const float *w, float *out, int row0, int row1) {
  const int CI = g->CI, CO = g->CO;
  const long last = (long)row1 * g->OW;
  long p = (long)row0 * g->OW;
  while (p < last) {
    /* up to four interior pixels (all taps inside the image): four independent sums at once */
    long q[4]; int n = 0;
    const float *xb[4];
    while (n < 4 && p + n < last && (CO & 7) == 0) {
      long pix = p + n; int ox = (int)(pix % g->OW); long rowi = pix / g->OW; int oy = (int)(rowi % g->OH), bb = (int)(rowi / g->OH);
      if (!interior(g, oy, ox)) break;
      q[n] = pix;
      xb[n] = x + (((long)bb * g->H + oy * g->sh - g->padTop) * g->W + ox * g->sw - g->padLeft) * CI;
      n++;
    }
    if (n == 0) {
      int ox = (int)(p % g->OW); long rowi = p / g->OW;
      conv_pixel(g, x, w, out + p * CO, (int)(rowi / g->OH), (int)(rowi % g->OH), ox);
      psk_canonical_nan(out + p * CO, CO);
      p++;
      continue;
    }
    for (int k = n; k < 4; k++) xb[k] = xb[0];
    for (int co0 = 0; co0 < CO; co0 += 8) {
      v8f q0 = splat(0), q1 = splat(0), q2 = splat(0), q3 = splat(0);
      for (int r = 0; r < g->kh; r++) {
        for (int c = 0; c < g->kw; c++) {
          long xo = ((long)r * g->W + c) * CI;
          const float *wr = w + (long)(r * g->kw + c) * CI * CO + co0;
          const float *x0 = xb[0] + xo, *x1 = xb[1] + xo, *x2 = xb[2] + xo, *x3 = xb[3] + xo;
          for (int ci = 0; ci < CI; ci++) {
            v8f wv = ld8(wr + (long)ci * CO);
            q0 = q0 + splat(x0[ci]) * wv;
            q1 = q1 + splat(x1[ci]) * wv;
            q2 = q2 + splat(x2[ci]) * wv;
            q3 = q3 + splat(x3[ci]) * wv;
          }
        }
      }
      st8(out + q[0] * CO + co0, q0);
      if (n > 1) st8(out + q[1] * CO + co0, q1);
      if (n > 2) st8(out + q[2] * CO + co0, q2);
      if (n > 3) st8(out + q[3] * CO + co0, q3);
    }
    for (int k = 0; k < n; k++) psk_canonical_nan(out + q[k] * CO, CO);
    p += n;
  }
}

/* the first window start o (o*s <= p) whose tap p - o*s is below k: ceil((p - k + 1) / s), at least 0 */
static inline int first_window(int p, int k, int s) {
  int n = p - k + 1;
  return n <= 0 ? 0 : (n + s - 1) / s;
}

/* output positions o whose tap o*s + off lies in [0, n): [first_in, last_in) */
static inline int first_in(int off, int s) { return off >= 0 ? 0 : (-off + s - 1) / s; }
static inline int last_in(int off, int s, int n, int outN) {
  int hi = n - 1 - off; /* o*s <= hi */
  if (hi < 0) return 0;
  int o = hi / s + 1;
  return o < outN ? o : outN;
}

/* wT[(t*CO + co)*CI + ci] = w[(t*CI + ci)*CO + co], so the ci of one (tap, co) are contiguous. */
CLONES void psk_conv2d_backprop_input(const struct psk_conv *g, const float *dy, const float *w, float *dx, float *wT, int row0, int row1) {
  const int CI = g->CI, CO = g->CO;
  (void)w;
  for (int row = row0; row < row1; row++) {
    int bb = row / g->H, y = row % g->H;
    for (int xx = 0; xx < g->W; xx++) {
      float *o = dx + ((long)row * g->W + xx) * CI;
      int ci0 = 0;
      for (; ci0 + 8 <= CI; ci0 += 8) {
        v8f acc = splat(0);
        for (int oy = first_window(y + g->padTop, g->kh, g->sh); oy < g->OH; oy++) {
          int r = y + g->padTop - oy * g->sh;
          if (r < 0) break;
          for (int ox = first_window(xx + g->padLeft, g->kw, g->sw); ox < g->OW; ox++) {
            int c = xx + g->padLeft - ox * g->sw;
            if (c < 0) break;
            const float *d = dy + (((long)bb * g->OH + oy) * g->OW + ox) * CO;
            const float *wr = wT + (long)(r * g->kw + c) * CO * CI + ci0;
            for (int co = 0; co < CO; co++) acc = acc + splat(d[co]) * ld8(wr + (long)co * CI);
          }
        }
        st8(o + ci0, acc);
      }
      for (int ci = ci0; ci < CI; ci++) {
        float acc = 0.0f;
        for (int oy = first_window(y + g->padTop, g->kh, g->sh); oy < g->OH; oy++) {
          int r = y + g->padTop - oy * g->sh;
          if (r < 0) break;
          for (int ox = first_window(xx + g->padLeft, g->kw, g->sw); ox < g->OW; ox++) {
            int c = xx + g->padLeft - ox * g->sw;
            if (c < 0) break;
            const float *d = dy + (((long)bb * g->OH + oy) * g->OW + ox) * CO;
            const float *wr = wT + (long)(r * g->kw + c) * CO * CI + ci;
            for (int co = 0; co < CO; co++) acc = acc + d[co] * wr[(long)co * CI];
          }
        }
        o[ci] = acc;
      }
      psk_canonical_nan(o, CI);
    }
  }
}

CLONES void psk_conv2d_backprop_filter(const struct psk_conv *g, const float *x, const float *dy, float *dw, int t0, int t1) {
  const int CI = g->CI, CO = g->CO;
  const long per = (long)CI * CO;
  memset(dw + t0 * per, 0, sizeof(float) * (size_t)((t1 - t0) * per));
  /* tap by tap: each element still sums its pixels in (b, oy, ox) order */
  for (int t = t0; t < t1; t++) {
    int r = t / g->kw, c = t % g->kw;
    int oyLo = first_in(r - g->padTop, g->sh), oyHi = last_in(r - g->padTop, g->sh, g->H, g->OH);
    int oxLo = first_in(c - g->padLeft, g->sw), oxHi = last_in(c - g->padLeft, g->sw, g->W, g->OW);
    float *acc = dw + t * per;
    for (int bb = 0; bb < g->B; bb++) {
      for (int oy = oyLo; oy < oyHi; oy++) {
        int iy = oy * g->sh + r - g->padTop;
        const float *xrow = x + (((long)bb * g->H + iy) * g->W) * CI;
        const float *drow = dy + (((long)bb * g->OH + oy) * g->OW) * CO;
        if (per == 8) {
          /* one input channel, eight outputs (a first layer): the sum stays in a register */
          v8f a0 = ld8(acc);
          for (int ox = oxLo; ox < oxHi; ox++) a0 = a0 + splat(xrow[(long)(ox * g->sw + c - g->padLeft)]) * ld8(drow + (long)ox * 8);
          st8(acc, a0);
          continue;
        }
        for (int ox = oxLo; ox < oxHi; ox++) {
          const float *xr = xrow + (long)(ox * g->sw + c - g->padLeft) * CI;
          const float *d = drow + (long)ox * CO;
          float *a = acc;
          for (int ci = 0; ci < CI; ci++, a += CO) {
            float xv = xr[ci];
            int co = 0;
            for (; co + 8 <= CO; co += 8) st8(a + co, ld8(a + co) + splat(xv) * ld8(d + co));
            for (; co < CO; co++) a[co] = a[co] + xv * d[co];
          }
        }
      }
    }
  }
  psk_canonical_nan(dw + t0 * per, (t1 - t0) * per);
}

/* dx (zeroed here) += dy of every window, (b, oy, ox) ascending, at its argmax:
 * the first in-image tap in (r, c) order holding the greatest value, a NaN
 * counting as greatest (the first NaN). Scattering in window order keeps each
 * element's sum in ascending window order. Channels ch in [ch0, ch1). */
void psk_maxpool_grad(const struct psk_conv *g, const float *dy, const float *x, float *dx, int ch0, int ch1) {
  const int C = g->CI, n = ch1 - ch0;
  const long pixels = (long)g->B * g->H * g->W;
  if (n == C) memset(dx, 0, sizeof(float) * (size_t)(pixels * C));
  else for (long i = 0; i < pixels; i++) memset(dx + i * C + ch0, 0, sizeof(float) * (size_t)n);
  float bv[64]; long bi[64];
  for (int cb = ch0; cb < ch1; cb += 64) {
    int m = ch1 - cb < 64 ? ch1 - cb : 64;
    for (int bb = 0; bb < g->B; bb++) {
      for (int oy = 0; oy < g->OH; oy++) {
        for (int ox = 0; ox < g->OW; ox++) {
          const float *d = dy + (((long)bb * g->OH + oy) * g->OW + ox) * C + cb;
          int first = 1;
          for (int r = 0; r < g->kh; r++) {
            int iy = oy * g->sh + r - g->padTop;
            if (iy < 0 || iy >= g->H) continue;
            for (int c = 0; c < g->kw; c++) {
              int ix = ox * g->sw + c - g->padLeft;
              if (ix < 0 || ix >= g->W) continue;
              long at = (((long)bb * g->H + iy) * g->W + ix) * C + cb;
              const float *xv = x + at;
              if (first) {
                for (int k = 0; k < m; k++) { bv[k] = xv[k]; bi[k] = at + k; }
                first = 0;
                continue;
              }
              for (int k = 0; k < m; k++) {
                float v = xv[k], b = bv[k];
                int take = (v != v && b == b) | (v > b);
                bv[k] = take ? v : b;
                bi[k] = take ? at + k : bi[k];
              }
            }
          }
          if (first) continue;
          for (int k = 0; k < m; k++) dx[bi[k]] = dx[bi[k]] + d[k];
        }
      }
    }
  }
  if (n == C) psk_canonical_nan(dx, pixels * C);
  else for (long i = 0; i < pixels; i++) psk_canonical_nan(dx + i * C + ch0, n);
}
