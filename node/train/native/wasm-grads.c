/* See psk-kernels.h: the canonical runtime's (tfjs-wasm@4.22.0-simd) Conv2DBackpropFilter and MaxPoolGrad with
 * that runtime's bits. Not psk1 kernels: the arithmetic is fixed by the existing kernels and their element
 * references (protocols/reference/conv.ts, pool-conv.ts); vectorised only across output elements. */
#include "psk-simd.h"
#include <stdint.h>

typedef double v8d __attribute__((vector_size(64)));
#define splat8d(x) __extension__({ double x_ = (x); (v8d){ x_, x_, x_, x_, x_, x_, x_, x_ }; })
#define ld8d(p) __builtin_convertvector(ld8(p), v8d)

/* output positions o whose tap o*s + off lies in [0, n): [lo, hi) */
static inline int in_lo(int off, int s) { return off >= 0 ? 0 : (-off + s - 1) / s; }
static inline int in_hi(int off, int s, int n, int outN) {
  int hi = n - 1 - off;
  if (hi < 0) return 0;
  int o = hi / s + 1;
  return o < outN ? o : outN;
}

static inline void store_f64(float *out, double v) {
  if (v != v) { uint32_t nan = 0xffc00000u; memcpy(out, &nan, 4); } else out[0] = (float)v;
}

#define FB 12 /* rows per block (8 doubles each, one AVX-512 register) */

/* MR rows (x offsets off[0..MR) from a pixel's window start) times NV vectors of 8 columns from co0; every
 * element a float64 sum over the pixels (b, oy, ox) ascending in [y0, y1) x [x0, x1) of x * dy, each product
 * exact in a double and each add one IEEE double add (as the JavaScript loop's), rounded to float32 once */
#define F64_BLOCK(name, MRMAX, NV) \
AI void name(const struct psk_conv *g, const float *x, const float *dy, const long *off, const int MR, int co0, \
             int y0, int y1, int x0, int x1, float *const *dst) { \
  v8d acc[MRMAX][NV]; \
  for (int i = 0; i < MRMAX; i++) for (int v = 0; v < NV; v++) acc[i][v] = splat8d(0.0); \
  for (int bb = 0; bb < g->B; bb++) \
    for (int oy = y0; oy < y1; oy++) { \
      const float *d = dy + (((long)bb * g->OH + oy) * g->OW + x0) * g->CO + co0; \
      const float *xp = x + (((long)bb * g->H + (long)oy * g->sh) * g->W + (long)x0 * g->sw) * g->CI; \
      for (int ox = x0; ox < x1; ox++, d += g->CO, xp += (long)g->sw * g->CI) { \
        v8d dv[NV]; \
        for (int v = 0; v < NV; v++) dv[v] = ld8d(d + 8 * v); \
        for (int i = 0; i < MRMAX; i++) { \
          if (i >= MR) break; \
          v8d xv = splat8d((double)xp[off[i]]); \
          for (int v = 0; v < NV; v++) acc[i][v] = acc[i][v] + xv * dv[v]; \
        } \
      } \
    } \
  for (int i = 0; i < MRMAX && i < MR; i++) \
    for (int v = 0; v < NV; v++) \
      for (int l = 0; l < 8; l++) store_f64(dst[i] + co0 + 8 * v + l, acc[i][v][l]); \
}
F64_BLOCK(f64_block1, FB, 1)
F64_BLOCK(f64_block2, 8, 2)

/* one element at a time (columns past the last vector of 8) */
static void f64_element(const struct psk_conv *g, const float *x, const float *dy, long off, int co,
                        int y0, int y1, int x0, int x1, float *dst) {
  double acc = 0.0;
  for (int bb = 0; bb < g->B; bb++)
    for (int oy = y0; oy < y1; oy++)
      for (int ox = x0; ox < x1; ox++) {
        const float xv = x[(((long)bb * g->H + (long)oy * g->sh) * g->W + (long)ox * g->sw) * g->CI + off];
        acc = acc + (double)xv * (double)dy[(((long)bb * g->OH + oy) * g->OW + ox) * g->CO + co];
      }
  store_f64(dst + co, acc);
}

/* dw rows k = (r*kw + c)*CI + ci in [k0, k1): rows of taps with the same in-image pixel range run in blocks */
CLONES int wasm_conv2d_backprop_filter(const struct psk_conv *g, const float *x, const float *dy, float *dw, int k0, int k1) {
  const int CI = g->CI, CO = g->CO;
  long off[FB]; float *dst[FB];
  int k = k0;
  while (k < k1) {
    const int tap = k / CI, r = tap / g->kw, c = tap % g->kw;
    const int y0 = in_lo(r - g->padTop, g->sh), y1 = in_hi(r - g->padTop, g->sh, g->H, g->OH);
    const int x0 = in_lo(c - g->padLeft, g->sw), x1 = in_hi(c - g->padLeft, g->sw, g->W, g->OW);
    const int maxRows = CO == 16 ? 8 : FB;
    int n = 0;
    for (; k < k1 && n < maxRows; k++, n++) {
      const int t = k / CI, rr = t / g->kw, cc = t % g->kw;
      if (n > 0 && (in_lo(rr - g->padTop, g->sh) != y0 || in_hi(rr - g->padTop, g->sh, g->H, g->OH) != y1 ||
                    in_lo(cc - g->padLeft, g->sw) != x0 || in_hi(cc - g->padLeft, g->sw, g->W, g->OW) != x1)) break;
      off[n] = ((long)(rr - g->padTop) * g->W + (cc - g->padLeft)) * CI + k % CI;
      dst[n] = dw + (long)k * CO;
    }
    if (y0 >= y1 || x0 >= x1) {
      for (int i = 0; i < n; i++) for (int co = 0; co < CO; co++) dst[i][co] = 0.0f;
      continue;
    }
    int co0 = 0;
    /* constant row counts (a full block, a 3x3 filter's taps of one channel) keep the accumulators in registers */
    if (CO == 16) {
      if (n == 8) f64_block2(g, x, dy, off, 8, 0, y0, y1, x0, x1, dst);
      else f64_block2(g, x, dy, off, n, 0, y0, y1, x0, x1, dst);
      co0 = 16;
    } else {
      for (; co0 + 8 <= CO; co0 += 8) {
        if (n == FB) f64_block1(g, x, dy, off, FB, co0, y0, y1, x0, x1, dst);
        else if (n == 9) f64_block1(g, x, dy, off, 9, co0, y0, y1, x0, x1, dst);
        else f64_block1(g, x, dy, off, n, co0, y0, y1, x0, x1, dst);
      }
    }
    for (int i = 0; i < n; i++)
      for (int co = co0; co < CO; co++) f64_element(g, x, dy, off[i], co, y0, y1, x0, x1, dst[i]);
  }
  int nan = 0;
  const uint32_t *u = (const uint32_t *)(dw + (long)k0 * CO);
  for (long i = 0; i < (long)(k1 - k0) * CO; i++) nan |= (u[i] & 0x7fffffffu) > 0x7f800000u;
  return nan;
}

/* float32 ops on bits with the wasm runtime's x86 NaN rule (the first NaN operand, quietened; an invalid op
 * 0xffc00000), for the elements whose result is a NaN (a compiler may swap a commutative op's operands) */
static inline int isnan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }
static inline uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t add_rule(uint32_t a, uint32_t b) {
  if (isnan_bits(a)) return a | 0x00400000u;
  if (isnan_bits(b)) return b | 0x00400000u;
  float s = bitsf(a) + bitsf(b);
  return s != s ? 0xffc00000u : fbits(s);
}
static inline uint32_t mul_rule(uint32_t a, uint32_t b) {
  if (isnan_bits(a)) return a | 0x00400000u;
  if (isnan_bits(b)) return b | 0x00400000u;
  float p = bitsf(a) * bitsf(b);
  return p != p ? 0xffc00000u : fbits(p);
}

/* the windows covering input position y: oy in [*lo, hi) ascending (tap y + pad - oy*s in [0, k)) */
static inline int cover_hi(int y, int k, int s, int pad, int outN, int *lo) {
  int n = y + pad - k + 1, o = n <= 0 ? 0 : (n + s - 1) / s;
  *lo = o;
  int hi = (y + pad) / s + 1; /* the last o with o*s <= y + pad, plus one */
  if (y + pad < 0) hi = 0;
  return hi < outN ? hi : outN;
}

/* Windows that do not overlap: a pixel has at most one covering window, so its element is (dy*mask) + 0 (one NaN
 * operand at most: the hardware's NaN is the rule's), written while the window's argmax is in registers; pixels of
 * no window are +0 */
typedef int v8i __attribute__((vector_size(32)));
/* the offsets (times the channel count) of the input pixels window (bb, oy, ox) covers, row by row: the taps' order */
static inline int window_taps(const struct psk_conv *g, int bb, int oy, int ox, long *tap) {
  int nt = 0;
  for (int r = 0; r < g->kh; r++) {
    const int iy = oy * g->sh + r - g->padTop;
    if (iy < 0 || iy >= g->H) continue;
    for (int c = 0; c < g->kw; c++) {
      const int ix = ox * g->sw + c - g->padLeft;
      if (ix >= 0 && ix < g->W) tap[nt++] = (((long)bb * g->H + iy) * g->W + ix) * g->CI;
    }
  }
  return nt;
}
AI int maxpool_grad_apart(const struct psk_conv *g, const float *dy, const float *x, float *dx, int ch0, int ch1) {
  const int C = g->CI;
  if (ch0 == 0 && ch1 == C) memset(dx, 0, sizeof(float) * (size_t)((long)g->B * g->H * g->W * C));
  else for (long p = 0; p < (long)g->B * g->H * g->W; p++) memset(dx + p * C + ch0, 0, sizeof(float) * (size_t)(ch1 - ch0));
  int nan = 0;
  if ((ch1 - ch0) % 8 == 0) {
    long tap[64];
    v8i nanv = { 0, 0, 0, 0, 0, 0, 0, 0 };
    const v8f one = splat(1.0f), zero = splat(0.0f);
    for (int bb = 0; bb < g->B; bb++)
      for (int oy = 0; oy < g->OH; oy++)
        for (int ox = 0; ox < g->OW; ox++) {
          const int nt = window_taps(g, bb, oy, ox, tap);
          const float *d = dy + (((long)bb * g->OH + oy) * g->OW + ox) * C;
          for (int ch = ch0; ch < ch1; ch += 8) {
            /* running max from FLT_MIN, the last tap holding a value >= it (-1: none) */
            v8f bv = splat(1.17549435e-38f);
            v8i bi = { -1, -1, -1, -1, -1, -1, -1, -1 };
            for (int t = 0; t < nt; t++) {
              v8f v = ld8(x + tap[t] + ch);
              v8i take = v >= bv;
              bv = (v8f)(((v8i)v & take) | ((v8i)bv & ~take));
              bi = (t & take) | (bi & ~take);
            }
            v8f dv = ld8(d + ch);
            for (int t = 0; t < nt; t++) {
              v8f o = dv * (v8f)((v8i)one & (bi == t)) + zero;
              nanv |= o != o;
              st8(dx + tap[t] + ch, o);
            }
            /* none found: the argmax is element 0 of the whole tensor, which this window may hold */
            if (ch == 0 && bi[0] < 0)
              for (int t = 0; t < nt; t++) if (tap[t] == 0) { dx[0] = d[0] * 1.0f + 0.0f; nan |= dx[0] != dx[0]; }
          }
        }
    for (int l = 0; l < 8; l++) nan |= nanv[l] != 0;
    return nan;
  }
  long tap[64];
  for (int bb = 0; bb < g->B; bb++)
    for (int oy = 0; oy < g->OH; oy++)
      for (int ox = 0; ox < g->OW; ox++) {
        const int nt = window_taps(g, bb, oy, ox, tap);
        const float *d = dy + (((long)bb * g->OH + oy) * g->OW + ox) * C;
        for (int cb = ch0; cb < ch1; cb += 64) {
          const int ce = cb + 64 < ch1 ? cb + 64 : ch1;
          float m[64]; long at[64];
          for (int ch = cb; ch < ce; ch++) { m[ch - cb] = 1.17549435e-38f; at[ch - cb] = 0; }
          for (int t = 0; t < nt; t++)
            for (int ch = cb; ch < ce; ch++) {
              const float v = x[tap[t] + ch];
              const int take = v >= m[ch - cb];
              m[ch - cb] = take ? v : m[ch - cb];
              at[ch - cb] = take ? tap[t] + ch : at[ch - cb];
            }
          for (int t = 0; t < nt; t++)
            for (int ch = cb; ch < ce; ch++) {
              /* no value >= FLT_MIN leaves the argmax at element 0 of the whole tensor */
              const long self = tap[t] + ch;
              const float v = d[ch] * (at[ch - cb] == self ? 1.0f : 0.0f) + 0.0f;
              dx[self] = v;
              nan |= v != v;
            }
        }
      }
  return nan;
}

/* MaxPoolGrad as tfjs-wasm computes it (protocols/reference/pool-conv.ts): each window's argmax is the last
 * in-image tap in (r, c) order whose value is >= the running max, which starts at FLT_MIN with index 0 of the
 * whole tensor; then dx = sum over the covering windows (oy, ox) ascending of dy * (argmax == this element),
 * acc = (dy*mask) + acc from +0. Channels [ch0, ch1). */
CLONES int wasm_maxpool_grad(const struct psk_conv *g, const float *dy, const float *x, float *dx, int ch0, int ch1) {
  const int C = g->CI;
  if (g->sh >= g->kh && g->sw >= g->kw && g->kh * g->kw <= 64) return maxpool_grad_apart(g, dy, x, dx, ch0, ch1);
  const long windows = (long)g->B * g->OH * g->OW;
  int32_t *am = malloc(sizeof(int32_t) * (size_t)(windows * C) + 1);
  if (am == NULL) return -3;
  for (int bb = 0; bb < g->B; bb++)
    for (int oy = 0; oy < g->OH; oy++)
      for (int ox = 0; ox < g->OW; ox++) {
        int32_t *a = am + (((long)bb * g->OH + oy) * g->OW + ox) * C;
        float m[64]; /* running maxima, 64 channels at a time */
        for (int cb = ch0; cb < ch1; cb += 64) {
          const int ce = cb + 64 < ch1 ? cb + 64 : ch1;
          for (int ch = cb; ch < ce; ch++) { m[ch - cb] = 1.17549435e-38f; a[ch] = 0; }
          for (int r = 0; r < g->kh; r++) {
            const int iy = oy * g->sh + r - g->padTop;
            if (iy < 0 || iy >= g->H) continue;
            for (int c = 0; c < g->kw; c++) {
              const int ix = ox * g->sw + c - g->padLeft;
              if (ix < 0 || ix >= g->W) continue;
              const long base = (((long)bb * g->H + iy) * g->W + ix) * C;
              for (int ch = cb; ch < ce; ch++) {
                const float v = x[base + ch];
                const int take = v >= m[ch - cb];
                m[ch - cb] = take ? v : m[ch - cb];
                a[ch] = take ? (int32_t)(base + ch) : a[ch];
              }
            }
          }
        }
      }
  int nan = 0;
  for (int bb = 0; bb < g->B; bb++)
    for (int y = 0; y < g->H; y++) {
      int oy0, ox0;
      const int oy1 = cover_hi(y, g->kh, g->sh, g->padTop, g->OH, &oy0);
      for (int xx = 0; xx < g->W; xx++) {
        const int ox1 = cover_hi(xx, g->kw, g->sw, g->padLeft, g->OW, &ox0);
        const long pix = (((long)bb * g->H + y) * g->W + xx) * C;
        float *o = dx + pix;
        for (int ch = ch0; ch < ch1; ch++) o[ch] = 0.0f;
        for (int oy = oy0; oy < oy1; oy++)
          for (int ox = ox0; ox < ox1; ox++) {
            const long w = (((long)bb * g->OH + oy) * g->OW + ox) * C;
            for (int ch = ch0; ch < ch1; ch++) {
              const float mask = am[w + ch] == (int32_t)(pix + ch) ? 1.0f : 0.0f;
              o[ch] = dy[w + ch] * mask + o[ch];
            }
          }
        int any = 0;
        for (int ch = ch0; ch < ch1; ch++) any |= o[ch] != o[ch];
        if (!any) continue;
        nan = 1;
        /* a NaN element again with the rule applied explicitly */
        for (int ch = ch0; ch < ch1; ch++) {
          if (o[ch] == o[ch]) continue;
          uint32_t acc = 0;
          for (int oy = oy0; oy < oy1; oy++)
            for (int ox = ox0; ox < ox1; ox++) {
              const long w = (((long)bb * g->OH + oy) * g->OW + ox) * C;
              const uint32_t mask = am[w + ch] == (int32_t)(pix + ch) ? 0x3f800000u : 0u;
              acc = add_rule(mul_rule(fbits(dy[w + ch]), mask), acc);
            }
          memcpy(o + ch, &acc, 4);
        }
      }
    }
  free(am);
  return nan;
}
