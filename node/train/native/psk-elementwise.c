/* See psk-kernels.h: tfjs-wasm's elementwise float32 kernels with its bits (not psk1 kernels). Each output
 * element is one IEEE float32 operation (no FMA: -ffp-contract=off), so the values are the wasm kernels'
 * whatever the vector width. Which NaN comes out of an op with two NaN operands depends on operand order,
 * which a compiler may swap in a commutative op, so every NaN output is rewritten by the runtime's rule
 * (protocols/reference/f32.ts): the first NaN operand quietened, else x86's default NaN 0xffc00000. */
#include "psk-simd.h"
#include <math.h>

typedef int v16i __attribute__((vector_size(64)));
#define QUIET 0x00400000u
#define DEFAULT_NAN 0xffc00000u
#define ldi16(p) __extension__({ v16i v_; memcpy(&v_, (p), sizeof v_); v_; })
#define sti16(p, v) do { v16i s_ = (v); memcpy((p), &s_, sizeof s_); } while (0)

static inline uint32_t bits(float v) { uint32_t u; memcpy(&u, &v, 4); return u; }
static inline int nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

/* the rule for a NaN output of a op b */
static uint32_t binary_nan(float a, float b) {
  uint32_t x = bits(a), y = bits(b);
  if (nan_bits(x)) return x | QUIET;
  if (nan_bits(y)) return y | QUIET;
  return DEFAULT_NAN;
}

/* out[i] = a[i] OP bp[i % P] for i in [lo, hi), lo a multiple of P; vectors of 16 while P allows */
#define BINARY_LOOP(OP) do {                                                              \
    for (long base = 0; base + P <= n; base += P) {                                        \
      long j = 0;                                                                          \
      for (; j + 16 <= P; j += 16) {                                                       \
        v16f r = ld16(a + base + j) OP ld16(bp + j);                                       \
        nanv |= (v16i)(r != r);                                                            \
        st16(out + base + j, r);                                                           \
      }                                                                                    \
      for (; j < P; j++) { float r = a[base + j] OP bp[j]; nan |= r != r; out[base + j] = r; } \
    }                                                                                      \
    for (long i = n - n % P; i < n; i++) { float r = a[i] OP bp[i % P]; nan |= r != r; out[i] = r; } \
  } while (0)

/* gcd with 16, for the period of a short broadcast row in whole vectors */
static long period(long bn) {
  long g = bn, h = 16;
  while (h != 0) { long t = g % h; g = h; h = t; }
  return bn * (16 / g);
}

CLONES int psk_binary(int op, const float *a, const float *b, float *out, long n, long bn) {
  /* a short row (a bias, a scalar) is repeated up to a whole number of vectors, so the loop reads it in vectors */
  float rep[1024];
  const float *bp = b;
  long P = bn;
  if (bn < n && bn < 64) {
    P = period(bn);
    while (P < 256 && P * 2 <= n) P *= 2;
    for (long i = 0; i < P; i++) rep[i] = b[i % bn];
    bp = rep;
  }
  v16i nanv = { 0 };
  int nan = 0;
  switch (op) {
    case PSK_ADD: BINARY_LOOP(+); break;
    case PSK_SUB: BINARY_LOOP(-); break;
    case PSK_MUL: BINARY_LOOP(*); break;
    default: BINARY_LOOP(/); break;
  }
  for (int k = 0; k < 16; k++) nan |= nanv[k] != 0;
  if (!nan) return 0;
  for (long i = 0; i < n; i++)
    if (out[i] != out[i]) { uint32_t u = binary_nan(a[i], b[i % bn]); memcpy(out + i, &u, 4); }
  return 1;
}

CLONES int psk_unary(int op, const float *x, float *out, long n, float alpha) {
  const uint32_t *xi = (const uint32_t *)(const void *)x;
  uint32_t *oi = (uint32_t *)(void *)out;
  long i = 0;
  if (op == PSK_RELU) {
    /* integer max with 0 on the bits (wasm i32x4.max_s): every negative-signed pattern, -0 and -NaN too, gives +0 */
    const v16i zero = { 0 };
    for (; i + 16 <= n; i += 16) { v16i v = ldi16(xi + i); sti16(oi + i, v & (v > zero)); }
    for (; i < n; i++) { int32_t v; memcpy(&v, xi + i, 4); oi[i] = v > 0 ? (uint32_t)v : 0u; }
    return -1;
  }
  if (op == PSK_STEP) {
    /* NaN kept as it is (bits untouched), x > 0 gives 1, else alpha */
    const int32_t one = (int32_t)bits(1.0f), al = (int32_t)bits(alpha);
    const v16i ones = one - (v16i){ 0 }, als = al - (v16i){ 0 }, mag = 0x7fffffff - (v16i){ 0 }, inf = 0x7f800000 - (v16i){ 0 };
    const v16f zero = splat16(0);
    for (; i + 16 <= n; i += 16) {
      v16i v = ldi16(xi + i);
      v16i isnan = (v & mag) > inf;
      v16i pos = (v16i)(ld16(x + i) > zero);
      sti16(oi + i, (isnan & v) | (~isnan & ((pos & ones) | (~pos & als))));
    }
    for (; i < n; i++) oi[i] = nan_bits(xi[i]) ? xi[i] : x[i] > 0 ? (uint32_t)one : (uint32_t)al;
    return -1;
  }
  v16i nanv = { 0 };
  int nan = 0;
  if (op == PSK_SQUARE) {
    for (; i + 16 <= n; i += 16) { v16f v = ld16(x + i); v16f r = v * v; nanv |= (v16i)(r != r); st16(out + i, r); }
    for (; i < n; i++) { float r = x[i] * x[i]; nan |= r != r; out[i] = r; }
  } else {
    /* sqrtf is correctly rounded; its NaNs (and errno's path for negatives) are rewritten below */
    for (; i < n; i++) { float r = sqrtf(x[i]); nan |= r != r; out[i] = r; }
  }
  for (int k = 0; k < 16; k++) nan |= nanv[k] != 0;
  if (!nan) return 0;
  for (long k = 0; k < n; k++)
    if (out[k] != out[k]) oi[k] = nan_bits(xi[k]) ? xi[k] | QUIET : DEFAULT_NAN;
  return 1;
}
