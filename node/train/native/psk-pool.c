/* See psk-kernels.h: MaxPoolGrad, and tfjs-wasm's Sum over leading axes. */
#include "psk-simd.h"

/* dx (zeroed here) += dy of every window, (b, oy, ox) ascending, at its argmax:
 * the first in-image tap in (r, c) order holding the greatest value, a NaN
 * counting as greatest (the first NaN). Scattering in window order keeps each
 * element's sum in ascending window order. Channels ch in [ch0, ch1): eight at
 * a time in vectors, the rest one by one. */
typedef int v8i __attribute__((vector_size(32)));
CLONES int psk_maxpool_grad(const struct psk_conv *g, const float *dy, const float *x, float *dx, int ch0, int ch1) {
  const int C = g->CI, n = ch1 - ch0;
  const long pixels = (long)g->B * g->H * g->W;
  long at[64];
  v8i nanSeen = { 0, 0, 0, 0, 0, 0, 0, 0 };
  const int vecEnd = ch0 + (n & ~7);
  /* windows that do not overlap: each dx element gets at most one term, written once (canonical) */
  const int apart = g->sh >= g->kh && g->sw >= g->kw;
  if (apart && g->sh == g->kh && g->sw == g->kw && n == C && vecEnd == ch1) {
    /* windows tiling the image write every element they cover: zero only the rows and columns past the last window */
    int yEnd = g->OH * g->sh - g->padTop, xEnd = g->OW * g->sw - g->padLeft;
    if (xEnd < 0) xEnd = 0;
    if (yEnd < 0) yEnd = 0;
    for (int bb = 0; bb < g->B; bb++)
      for (int y = 0; y < g->H; y++) {
        float *rowp = dx + ((long)bb * g->H + y) * g->W * C;
        if (y >= yEnd) memset(rowp, 0, sizeof(float) * (size_t)g->W * C);
        else if (xEnd < g->W) memset(rowp + (long)xEnd * C, 0, sizeof(float) * (size_t)(g->W - xEnd) * C);
      }
  } else if (n == C) memset(dx, 0, sizeof(float) * (size_t)(pixels * C));
  else for (long i = 0; i < pixels; i++) memset(dx + i * C + ch0, 0, sizeof(float) * (size_t)n);
  for (int bb = 0; bb < g->B; bb++) {
    for (int oy = 0; oy < g->OH; oy++) {
      for (int ox = 0; ox < g->OW; ox++) {
        /* the window's in-image taps in (r, c) order, as offsets of their pixel in x */
        int nt = 0, listed = g->kh * g->kw <= 64;
        for (int r = 0; r < g->kh; r++) {
          int iy = oy * g->sh + r - g->padTop;
          if (iy < 0 || iy >= g->H) continue;
          for (int c = 0; c < g->kw; c++) {
            int ix = ox * g->sw + c - g->padLeft;
            if (ix < 0 || ix >= g->W || !listed) continue;
            at[nt++] = (((long)bb * g->H + iy) * g->W + ix) * C;
          }
        }
        const float *d = dy + (((long)bb * g->OH + oy) * g->OW + ox) * C;
        if (listed) {
          if (nt == 0) continue;
          int ch = ch0;
          for (; ch < vecEnd; ch += 8) {
            v8f bv = ld8(x + at[0] + ch);
            v8i bi = { 0, 0, 0, 0, 0, 0, 0, 0 };
            for (int t = 1; t < nt; t++) {
              v8f v = ld8(x + at[t] + ch);
              v8i take = ((v != v) & (bv == bv)) | (v > bv);
              bv = (v8f)(((v8i)v & take) | ((v8i)bv & ~take));
              bi = (t & take) | (bi & ~take);
            }
            if (apart) {
              /* this window alone writes its taps: +0 + dy at the argmax (the sum of one term), +0 elsewhere */
              v8f dv = splat(0) + ld8(d + ch);
              v8i nan = dv != dv;
              dv = (v8f)(((v8i)dv & ~nan) | (0x7fc00000 & nan));
              nanSeen |= nan;
              for (int t = 0; t < nt; t++) st8(dx + at[t] + ch, (v8f)((v8i)dv & (bi == t)));
              continue;
            }
            for (int k = 0; k < 8; k++) { float *p = dx + at[bi[k]] + ch + k; *p = *p + d[ch + k]; }
          }
          for (; ch < ch1; ch++) {
            float b = x[at[0] + ch]; int best = 0;
            for (int t = 1; t < nt; t++) {
              float v = x[at[t] + ch];
              if ((v != v && b == b) || v > b) { b = v; best = t; }
            }
            dx[at[best] + ch] = dx[at[best] + ch] + d[ch];
          }
          continue;
        }
        /* windows of more than 64 taps: scanned in place */
        for (int ch = ch0; ch < ch1; ch++) {
          long bestAt = -1; float b = 0.0f;
          for (int r = 0; r < g->kh; r++) {
            int iy = oy * g->sh + r - g->padTop;
            if (iy < 0 || iy >= g->H) continue;
            for (int c = 0; c < g->kw; c++) {
              int ix = ox * g->sw + c - g->padLeft;
              if (ix < 0 || ix >= g->W) continue;
              long a = (((long)bb * g->H + iy) * g->W + ix) * C + ch;
              float v = x[a];
              if (bestAt < 0 || (v != v && b == b) || v > b) { b = v; bestAt = a; }
            }
          }
          if (bestAt >= 0) dx[bestAt] = dx[bestAt] + d[ch];
        }
      }
    }
  }
  /* apart windows each wrote their dy (NaNs canonical) once, at a tap no other window writes */
  if (apart && vecEnd == ch1) {
    int any = 0;
    for (int k = 0; k < 8; k++) any |= nanSeen[k] != 0;
    return any;
  }
  if (n == C) return psk_canonical_nan(dx, pixels * C);
  int any = 0;
  for (long i = 0; i < pixels; i++) any |= psk_canonical_nan(dx + i * C + ch0, n);
  return any;
}

/* The float32 sum of x[0 .. n) (stride s) by the wasm Sum's rule, NaN bits included: s = +0, s = s + v in
 * order, a NaN operand returned quietened (the running sum's first), an invalid add giving x86's default
 * NaN 0xffc00000. Used where a vectorised sum came out NaN: which NaN depends on operand order, which a
 * compiler may swap in a commutative add. */
static uint32_t sum_nan_bits(const float *x, long n, long s) {
  float acc = 0.0f;
  for (long i = 0; i < n; i++) {
    float v = x[i * s];
    if (v != v) { uint32_t u; memcpy(&u, &v, 4); return u | 0x00400000u; }
    acc = acc + v;
    if (acc != acc) return 0xffc00000u;
  }
  uint32_t u; memcpy(&u, &acc, 4);
  return u;
}

CLONES void psk_sum_cols(const float *x, float *out, long rows, int cols) {
  int c = 0;
  for (; c + 16 <= cols; c += 16) {
    v16f acc = splat16(0);
    for (long r = 0; r < rows; r++) acc = acc + ld16(x + r * cols + c);
    st16(out + c, acc);
  }
  for (; c + 8 <= cols; c += 8) {
    v8f acc = splat(0);
    for (long r = 0; r < rows; r++) acc = acc + ld8(x + r * cols + c);
    st8(out + c, acc);
  }
  for (; c < cols; c++) {
    float acc = 0.0f;
    for (long r = 0; r < rows; r++) acc = acc + x[r * cols + c];
    out[c] = acc;
  }
  for (c = 0; c < cols; c++)
    if (out[c] != out[c]) { uint32_t u = sum_nan_bits(x + c, rows, cols); memcpy(out + c, &u, 4); }
}
