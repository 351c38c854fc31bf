/* See psk-kernels.h: Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter as register-blocked GEMMs whose rows
 * are read through offset tables (no im2col copy), each output element one sum in the reference's order. */
#include "psk-simd.h"

/* output columns [*lo, *hi) of output row oy whose windows lie wholly inside the image (empty when the row's do not) */
static inline void interior_cols(const struct psk_conv *g, int oy, int *lo, int *hi) {
  int y0 = oy * g->sh - g->padTop;
  *lo = 0; *hi = 0;
  if (y0 < 0 || y0 + g->kh > g->H || g->W - g->kw + g->padLeft < 0) return;
  int a = (g->padLeft + g->sw - 1) / g->sw, b = (g->W - g->kw + g->padLeft) / g->sw + 1;
  if (b > g->OW) b = g->OW;
  if (a < b) { *lo = a; *hi = b; }
}

/* off[k] for k = (r*kw + c)*CI + ci: where a window's element k lies from the window's first element in x */
static int *window_offsets(const struct psk_conv *g) {
  int K = g->kh * g->kw * g->CI;
  int *off = malloc(sizeof(int) * (size_t)K);
  if (off == NULL) return NULL;
  for (int r = 0, k = 0; r < g->kh; r++)
    for (int c = 0; c < g->kw; c++)
      for (int ci = 0; ci < g->CI; ci++, k++) off[k] = (r * g->W + c) * g->CI + ci;
  return off;
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

/* MR output rows times one vector of VW columns: row i's element sums A_i(k) = xp[i][off[k]] times
 * w[k*ldw + column] over k ascending, one IEEE add per term. MR is a constant where it is inlined, so acc
 * stays in registers; the 16-wide type is one AVX-512 register, two AVX2 ones. */
#define PBLOCK(name, VT, LD, ST, SPLAT) \
AI void name(const float *const *xp, const int *off, int K, const float *w, long ldw, float *const *op, const int MR) { \
  VT acc[8]; \
  for (int i = 0; i < MR; i++) acc[i] = SPLAT(0); \
  for (int k = 0; k < K; k++) { \
    VT wv = LD(w + (long)k * ldw); \
    const int o = off[k]; \
    for (int i = 0; i < MR; i++) acc[i] = acc[i] + SPLAT(xp[i][o]) * wv; \
  } \
  for (int i = 0; i < MR; i++) ST(op[i], acc[i]); \
}
PBLOCK(pblock8, v8f, ld8, st8, splat)
PBLOCK(pblock16, v16f, ld16, st16, splat16)

/* rows xp[0 .. n), n <= PB, output columns [c0, c1) at op[i] + column: blocks of 16 (6 rows at a time), of 8
 * (8 rows), then one column at a time */
#define PB 24
AI void rows_gemm(const float *const *xp, int n, const int *off, int K, const float *w, long ldw, float *const *op, int c0, int c1) {
  float *o[PB];
  int c = c0;
  for (; c + 16 <= c1; c += 16) {
    for (int i = 0; i < n; i++) o[i] = op[i] + c;
    int i = 0;
    for (; i + 6 <= n; i += 6) pblock16(xp + i, off, K, w + c, ldw, o + i, 6);
    switch (n - i) {
      case 1: pblock16(xp + i, off, K, w + c, ldw, o + i, 1); break;
      case 2: pblock16(xp + i, off, K, w + c, ldw, o + i, 2); break;
      case 3: pblock16(xp + i, off, K, w + c, ldw, o + i, 3); break;
      case 4: pblock16(xp + i, off, K, w + c, ldw, o + i, 4); break;
      case 5: pblock16(xp + i, off, K, w + c, ldw, o + i, 5); break;
    }
  }
  for (; c + 8 <= c1; c += 8) {
    for (int i = 0; i < n; i++) o[i] = op[i] + c;
    int i = 0;
    for (; i + 8 <= n; i += 8) pblock8(xp + i, off, K, w + c, ldw, o + i, 8);
    switch (n - i) {
      case 1: pblock8(xp + i, off, K, w + c, ldw, o + i, 1); break;
      case 2: pblock8(xp + i, off, K, w + c, ldw, o + i, 2); break;
      case 3: pblock8(xp + i, off, K, w + c, ldw, o + i, 3); break;
      case 4: pblock8(xp + i, off, K, w + c, ldw, o + i, 4); break;
      case 5: pblock8(xp + i, off, K, w + c, ldw, o + i, 5); break;
      case 6: pblock8(xp + i, off, K, w + c, ldw, o + i, 6); break;
      case 7: pblock8(xp + i, off, K, w + c, ldw, o + i, 7); break;
    }
  }
  for (; c < c1; c++)
    for (int i = 0; i < n; i++) {
      float acc = 0.0f;
      for (int k = 0; k < K; k++) acc = acc + xp[i][off[k]] * w[(long)k * ldw + c];
      op[i][c] = acc;
    }
}

/* One input channel, stride 1 along x and 8 output channels (a first layer on a grey image): one channel per
 * register gives a pixel only 8 lanes, so here the lanes are 16 adjacent output pixels (their windows are 16
 * adjacent values of x, one load per tap) and the 8 accumulators the channels, each element still one sum over
 * the taps ascending. The 8 x 16 block is then transposed to pixel-major by three rounds of interleaving pairs of
 * rows (each round makes a channel bit the lowest lane bit). */
typedef int v16i_conv __attribute__((vector_size(64)));
#define ZIP_LO ((v16i_conv){ 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23 })
#define ZIP_HI ((v16i_conv){ 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31 })
AI void conv16_c1_co8(const float *xp, const int *off, int K, const float *w, float *op) {
  v16f a[8], t[8];
  for (int c = 0; c < 8; c++) a[c] = splat16(0);
  for (int k = 0; k < K; k++) {
    v16f xv = ld16(xp + off[k]);
    for (int c = 0; c < 8; c++) a[c] = a[c] + xv * splat16(w[k * 8 + c]);
  }
  for (int c = 0; c < 4; c++) { t[c] = __builtin_shuffle(a[c], a[c + 4], ZIP_LO); t[c + 4] = __builtin_shuffle(a[c], a[c + 4], ZIP_HI); }
  for (int c = 0; c < 8; c += 4)
    for (int d = 0; d < 2; d++) { a[c + d] = __builtin_shuffle(t[c + d], t[c + d + 2], ZIP_LO); a[c + d + 2] = __builtin_shuffle(t[c + d], t[c + d + 2], ZIP_HI); }
  for (int c = 0; c < 8; c += 2) { t[c] = __builtin_shuffle(a[c], a[c + 1], ZIP_LO); t[c + 1] = __builtin_shuffle(a[c], a[c + 1], ZIP_HI); }
  for (int j = 0; j < 8; j++) st16(op + 16 * j, t[j]);
}

CLONES int psk_conv2d(const struct psk_conv *g, const float *x, const float *w, float *out, int row0, int row1) {
  const int CI = g->CI, CO = g->CO, K = g->kh * g->kw * CI;
  int *off = window_offsets(g);
  const float *xp[PB]; float *op[PB]; int n = 0;
  for (int row = row0; row < row1; row++) {
    int bb = row / g->OH, oy = row % g->OH, lo, hi;
    float *orow = out + (long)row * g->OW * CO;
    interior_cols(g, oy, &lo, &hi);
    if (off == NULL) lo = hi = 0;
    for (int ox = 0; ox < g->OW; ox++) {
      if (ox == lo && lo < hi) { ox = hi - 1; continue; }
      conv_pixel(g, x, w, orow + (long)ox * CO, bb, oy, ox);
    }
    /* interior pixels, in blocks of 8 across output rows */
    if (lo >= hi) continue;
    const float *xrow = x + (((long)bb * g->H + oy * g->sh - g->padTop) * g->W) * CI;
    int ox = lo;
    if (CI == 1 && g->sw == 1 && CO == 8)
      for (; ox + 16 <= hi; ox += 16) conv16_c1_co8(xrow + ox - g->padLeft, off, K, w, orow + (long)ox * CO);
    for (; ox < hi; ox++) {
      xp[n] = xrow + ((long)ox * g->sw - g->padLeft) * CI;
      op[n] = orow + (long)ox * CO;
      if (++n == PB) { rows_gemm(xp, n, off, K, w, CO, op, 0, CO); n = 0; }
    }
  }
  if (n > 0) rows_gemm(xp, n, off, K, w, CO, op, 0, CO);
  free(off);
  return psk_canonical_nan(out + (long)row0 * g->OW * CO, (long)(row1 - row0) * g->OW * CO);
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

/* one input pixel of Conv2DBackpropInput, element by element (the order of the class GEMM below) */
static void bwi_pixel(const struct psk_conv *g, const float *dy, const float *w, float *dx, int bb, int y, int xx) {
  const int CI = g->CI, CO = g->CO;
  float *o = dx + (((long)bb * g->H + y) * g->W + xx) * CI;
  for (int ci = 0; ci < CI; ci++) {
    float acc = 0.0f;
    for (int oy = first_window(y + g->padTop, g->kh, g->sh); oy < g->OH; oy++) {
      int r = y + g->padTop - oy * g->sh;
      if (r < 0) break;
      for (int ox = first_window(xx + g->padLeft, g->kw, g->sw); ox < g->OW; ox++) {
        int c = xx + g->padLeft - ox * g->sw;
        if (c < 0) break;
        const float *d = dy + (((long)bb * g->OH + oy) * g->OW + ox) * CO;
        const float *wr = w + ((long)(r * g->kw + c) * CI + ci) * CO;
        for (int co = 0; co < CO; co++) acc = acc + d[co] * wr[co];
      }
    }
    o[ci] = acc;
  }
}

static int bwi_slow(const struct psk_conv *g, const float *dy, const float *w, float *dx, int row0, int row1) {
  for (int row = row0; row < row1; row++)
    for (int x = 0; x < g->W; x++) bwi_pixel(g, dy, w, dx, row / g->H, row % g->H, x);
  return g->raw ? psk_scan_nan(dx + (long)row0 * g->W * g->CI, (long)(row1 - row0) * g->W * g->CI) : psk_canonical_nan(dx + (long)row0 * g->W * g->CI, (long)(row1 - row0) * g->W * g->CI);
}

/* The windows covering input row y, oy ascending (the kernel's order): oy = *first + j for j < *n, with
 * filter row r = r0 - j*sh, r0 returned. The same for columns with (kw, sw, padLeft, OW). */
static inline int cover(int y, int k, int s, int pad, int outN, int *first, int *n) {
  int oy = first_window(y + pad, k, s), r0 = y + pad - oy * s, m = 0;
  *first = oy;
  for (; oy < outN && y + pad - oy * s >= 0; oy++) m++;
  *n = m;
  return r0;
}

/* dx rows (b*H + y) in [row0, row1). Input pixels whose covering windows use the same filter taps in the same
 * order (the same (r0, n) for y, (c0, m) for x) form a class; within a class, pixel p's j-th window's dy row is
 * at a fixed distance from its first one, so a class is one GEMM: rows dy + first(p), off[(jy*m + jx)*CO + co] =
 * (jy*OW + jx)*CO + co, against the class's filter taps packed as Wc[k*CI + ci]. */
CLONES int psk_conv2d_backprop_input(const struct psk_conv *g, const float *dy, const float *w, float *dx, int row0, int row1) {
  const int CI = g->CI, CO = g->CO;
  const long Kmax = (long)g->kh * g->kw * CO;
  int *ycls = malloc(sizeof(int) * (size_t)(3 * g->H + 3 * g->W));
  int *off = malloc(sizeof(int) * (size_t)Kmax);
  float *wc = malloc(sizeof(float) * (size_t)(Kmax * CI));
  if (ycls == NULL || off == NULL || wc == NULL) {
    free(ycls); free(off); free(wc);
    return bwi_slow(g, dy, w, dx, row0, row1);
  }
  /* per y: class id, first window, count; classes numbered by first appearance */
  int *yfirst = ycls + g->H, *yr0 = yfirst + g->H, *xcls = yr0 + g->H, *xfirst = xcls + g->W, *xc0 = xfirst + g->W;
  int ny = 0, nx = 0, ykey[2 * 64], xkey[2 * 64];
  int *yn = malloc(sizeof(int) * (size_t)(g->H + g->W)), *xn = yn == NULL ? NULL : yn + g->H;
  if (yn == NULL) { free(ycls); free(off); free(wc); return bwi_slow(g, dy, w, dx, row0, row1); }
  for (int y = 0; y < g->H; y++) {
    yr0[y] = cover(y, g->kh, g->sh, g->padTop, g->OH, &yfirst[y], &yn[y]);
    int c = 0;
    while (c < ny && c < 64 && !(ykey[2 * c] == yr0[y] && ykey[2 * c + 1] == yn[y])) c++;
    if (c == ny && ny < 64) { ykey[2 * ny] = yr0[y]; ykey[2 * ny + 1] = yn[y]; ny++; }
    ycls[y] = c; /* 64 or more classes: the rest share class 64 and take the slow path */
  }
  for (int x = 0; x < g->W; x++) {
    xc0[x] = cover(x, g->kw, g->sw, g->padLeft, g->OW, &xfirst[x], &xn[x]);
    int c = 0;
    while (c < nx && c < 64 && !(xkey[2 * c] == xc0[x] && xkey[2 * c + 1] == xn[x])) c++;
    if (c == nx && nx < 64) { xkey[2 * nx] = xc0[x]; xkey[2 * nx + 1] = xn[x]; nx++; }
    xcls[x] = c;
  }
  const float *xp[PB]; float *op[PB];
  for (int cy = 0; cy < ny; cy++) {
    for (int cx = 0; cx < nx; cx++) {
      const int r0 = ykey[2 * cy], n = ykey[2 * cy + 1], c0 = xkey[2 * cx], m = xkey[2 * cx + 1];
      const int K = n * m * CO;
      for (int jy = 0, k = 0; jy < n; jy++)
        for (int jx = 0; jx < m; jx++) {
          const int tap = (r0 - jy * g->sh) * g->kw + (c0 - jx * g->sw);
          for (int co = 0; co < CO; co++, k++) {
            off[k] = (jy * g->OW + jx) * CO + co;
            for (int ci = 0; ci < CI; ci++) wc[(long)k * CI + ci] = w[((long)tap * CI + ci) * CO + co];
          }
        }
      int np = 0;
      for (int row = row0; row < row1; row++) {
        const int bb = row / g->H, y = row % g->H;
        if (ycls[y] != cy) continue;
        for (int x = 0; x < g->W; x++) {
          if (xcls[x] != cx) continue;
          float *o = dx + ((long)row * g->W + x) * CI;
          if (K == 0) { memset(o, 0, sizeof(float) * (size_t)CI); continue; }
          xp[np] = dy + (((long)bb * g->OH + yfirst[y]) * g->OW + xfirst[x]) * CO;
          op[np] = o;
          if (++np == PB) { rows_gemm(xp, np, off, K, wc, CI, op, 0, CI); np = 0; }
        }
      }
      if (np > 0) rows_gemm(xp, np, off, K, wc, CI, op, 0, CI);
    }
  }
  /* pixels of a 65th or later class */
  for (int row = row0; row < row1; row++)
    for (int x = 0; x < g->W; x++)
      if (ycls[row % g->H] == 64 || xcls[x] == 64) bwi_pixel(g, dy, w, dx, row / g->H, row % g->H, x);
  free(ycls); free(off); free(wc); free(yn);
  return g->raw ? psk_scan_nan(dx + (long)row0 * g->W * CI, (long)(row1 - row0) * g->W * CI) : psk_canonical_nan(dx + (long)row0 * g->W * CI, (long)(row1 - row0) * g->W * CI);
}

/* dw rows k0 .. k0+MR-1 (k = tap*CI + ci) times one vector of VW columns from co0: each element one sum
 * over the pixels (b, oy, ox) ascending whose tap lies inside the image */
#define BWF_BLOCK(name, VT, LD, ST, SPLAT) \
AI void name(const struct psk_conv *g, const float *x, const float *dy, const int *off, int k0, int co0, float *dw, const int MR) { \
  const int CI = g->CI, CO = g->CO; \
  const long ps = (long)g->sw * CI; \
  VT acc[9]; \
  int ko[9], kr[9], kc[9]; \
  for (int i = 0; i < MR; i++) { \
    acc[i] = SPLAT(0); \
    int t = (k0 + i) / CI; \
    ko[i] = off[k0 + i]; kr[i] = t / g->kw; kc[i] = t % g->kw; \
  } \
  for (int bb = 0; bb < g->B; bb++) { \
    for (int oy = 0; oy < g->OH; oy++) { \
      int lo, hi, iy0 = oy * g->sh - g->padTop; \
      interior_cols(g, oy, &lo, &hi); \
      const float *drow = dy + (((long)bb * g->OH + oy) * g->OW) * CO + co0; \
      for (int ox = 0; ox < g->OW; ox++) { \
        if (ox == lo && lo < hi) { \
          const float *xb = x + (((long)bb * g->H + iy0) * g->W + ox * g->sw - g->padLeft) * CI; \
          for (; ox < hi; ox++, xb += ps) { \
            VT dv = LD(drow + (long)ox * CO); \
            for (int i = 0; i < MR; i++) acc[i] = acc[i] + SPLAT(xb[ko[i]]) * dv; \
          } \
          ox--; \
          continue; \
        } \
        VT dv = LD(drow + (long)ox * CO); \
        int ix0 = ox * g->sw - g->padLeft; \
        for (int i = 0; i < MR; i++) { \
          int iy = iy0 + kr[i], ix = ix0 + kc[i]; \
          if (iy < 0 || iy >= g->H || ix < 0 || ix >= g->W) continue; \
          acc[i] = acc[i] + SPLAT(x[(((long)bb * g->H + iy) * g->W + ix) * CI + (k0 + i) % CI]) * dv; \
        } \
      } \
    } \
  } \
  for (int i = 0; i < MR; i++) ST(dw + (long)(k0 + i) * CO + co0, acc[i]); \
}
BWF_BLOCK(bwf_block8, v8f, ld8, st8, splat)
BWF_BLOCK(bwf_block16, v16f, ld16, st16, splat16)

/* bwf_block for MR = 1 .. 9 (8 columns: a 3x3 filter's 9 taps of one channel in one pass over dy) or 1 .. 6
 * (16 columns): the register blocks that fit 16 vector registers */
#define BWF_CASE(m) case m: BWF_FN(g, x, dy, off, k, co0, dw, m); break;
#define BWF_SWITCH(mr) switch (mr) { BWF_CASE(1) BWF_CASE(2) BWF_CASE(3) BWF_CASE(4) BWF_CASE(5) BWF_CASE(6) BWF_CASE(7) BWF_CASE(8) BWF_CASE(9) }

CLONES int psk_conv2d_backprop_filter(const struct psk_conv *g, const float *x, const float *dy, float *dw, int k0, int k1) {
  const int CI = g->CI, CO = g->CO;
  int *off = window_offsets(g);
  if (off != NULL) {
    int co0 = 0;
    /* rows [k0, k1) in blocks of nearly equal height: a short last block would be one slow dependency chain */
    for (; co0 + 16 <= CO; co0 += 16) {
      int nb = (k1 - k0 + 5) / 6;
      for (int b = 0, k = k0; b < nb; b++) {
        int mr = (k1 - k) / (nb - b) + ((k1 - k) % (nb - b) != 0);
#define BWF_FN bwf_block16
        if (mr > 6) mr = 6;
        BWF_SWITCH(mr)
#undef BWF_FN
        k += mr;
      }
    }
    for (; co0 + 8 <= CO; co0 += 8) {
      int nb = (k1 - k0 + 8) / 9;
      for (int b = 0, k = k0; b < nb; b++) {
        int mr = (k1 - k) / (nb - b) + ((k1 - k) % (nb - b) != 0);
#define BWF_FN bwf_block8
        BWF_SWITCH(mr)
#undef BWF_FN
        k += mr;
      }
    }
    free(off);
    if (co0 == CO) return psk_canonical_nan(dw + (long)k0 * CO, (long)(k1 - k0) * CO);
    for (int k = k0; k < k1; k++) for (int co = co0; co < CO; co++) dw[(long)k * CO + co] = 0.0f;
    /* the columns past the last block of 8: pixel by pixel, each element's sum in the same order */
    for (int t = k0 / CI; t <= (k1 - 1) / CI; t++) {
      int r = t / g->kw, c = t % g->kw;
      int ciLo = t == k0 / CI ? k0 % CI : 0, ciHi = t == (k1 - 1) / CI ? (k1 - 1) % CI + 1 : CI;
      int oyLo = first_in(r - g->padTop, g->sh), oyHi = last_in(r - g->padTop, g->sh, g->H, g->OH);
      int oxLo = first_in(c - g->padLeft, g->sw), oxHi = last_in(c - g->padLeft, g->sw, g->W, g->OW);
      for (int bb = 0; bb < g->B; bb++)
        for (int oy = oyLo; oy < oyHi; oy++)
          for (int ox = oxLo; ox < oxHi; ox++) {
            const float *xr = x + (((long)bb * g->H + oy * g->sh + r - g->padTop) * g->W + ox * g->sw + c - g->padLeft) * CI;
            const float *d = dy + (((long)bb * g->OH + oy) * g->OW + ox) * CO;
            for (int ci = ciLo; ci < ciHi; ci++) {
              float *a = dw + ((long)t * CI + ci) * CO;
              for (int co = co0; co < CO; co++) a[co] = a[co] + xr[ci] * d[co];
            }
          }
    }
    return psk_canonical_nan(dw + (long)k0 * CO, (long)(k1 - k0) * CO);
  }
  /* no memory for the offsets: element by element */
  for (int k = k0; k < k1; k++) {
    int t = k / CI, ci = k % CI, r = t / g->kw, c = t % g->kw;
    for (int co = 0; co < CO; co++) {
      float acc = 0.0f;
      for (int bb = 0; bb < g->B; bb++)
        for (int oy = 0; oy < g->OH; oy++) {
          int iy = oy * g->sh + r - g->padTop;
          if (iy < 0 || iy >= g->H) continue;
          for (int ox = 0; ox < g->OW; ox++) {
            int ix = ox * g->sw + c - g->padLeft;
            if (ix < 0 || ix >= g->W) continue;
            acc = acc + x[(((long)bb * g->H + iy) * g->W + ix) * CI + ci] * dy[(((long)bb * g->OH + oy) * g->OW + ox) * CO + co];
          }
        }
      dw[(long)k * CO + co] = acc;
    }
  }
  return psk_canonical_nan(dw + (long)k0 * CO, (long)(k1 - k0) * CO);
}
