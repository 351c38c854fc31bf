/* proofswarm kernels psk1: every output element is ONE sequential float32
 * reduction in a fixed order (acc = +0; acc = acc + a*b, each operation
 * rounded to float32, no FMA), vectorised only across output elements, so the
 * bits do not depend on SIMD width, blocking or threads. Any NaN output is
 * written as 0x7fc00000. The reference is protocols/reference/psk.ts.
 * Every kernel returns whether the outputs it wrote hold a NaN, found in the
 * pass that canonicalises them (the NaN watch need not scan them again). */
#ifndef PSK_KERNELS_H
#define PSK_KERNELS_H
#include <stddef.h>
#include <stdint.h>

/* B [bBatch,K,N] (or [bBatch,N,K] when tb) packed into panels of 16 columns
 * (psk_packed_size floats per batch), as psk_matmul reads it. */
long psk_packed_size(int K, int N);
void psk_pack(const float *b, int bBatch, int K, int N, int tb, float *packed);
/* out[b,i,j] = sum_k A(b,i,k) B(b,k,j) (+ bias[j]) (relu), A [aBatch,M,K] or
 * [aBatch,K,M] (ta), B packed by psk_pack; a batch of 1 broadcasts. bias: NULL,
 * or biasLen 1 or N values. Output rows (b*M + i) in [row0, row1). */
int psk_matmul(const float *a, const float *bp, float *out, int batch, int aBatch, int bBatch,
                int M, int N, int K, int ta, const float *bias, int biasLen, int relu,
                int row0, int row1);

/* raw: keep NaNs as the arithmetic gives them instead of writing 0x7fc00000 (Conv2DBackpropInput only: the
 * canonical runtime's kernel, whose sums are psk1's in the same order) */
struct psk_conv { int B, H, W, CI, kh, kw, CO, OH, OW, sh, sw, padTop, padLeft, raw; };

/* out [B,OH,OW,CO]; taps (r, c) ascending inside the image, then ci. Rows of
 * the output (b*OH+oy) in [row0, row1). */
int psk_conv2d(const struct psk_conv *g, const float *x, const float *w, float *out, int row0, int row1);
/* dx [B,H,W,CI] from dy [B,OH,OW,CO]: covering (oy, ox) ascending, then co. Rows (b*H + y) in [row0, row1). */
int psk_conv2d_backprop_input(const struct psk_conv *g, const float *dy, const float *w, float *dx, int row0, int row1);
/* dw [kh,kw,CI,CO]: (b, oy, ox) ascending with the tap inside the image. Rows k = (r*kw + c)*CI + ci in [k0, k1). */
int psk_conv2d_backprop_filter(const struct psk_conv *g, const float *x, const float *dy, float *dw, int k0, int k1);

/* MaxPoolGrad: dx [B,H,W,C] (C in CI) from dy [B,OH,OW,C] and the pool's input x; window kh x kw. Channels [ch0, ch1). */
int psk_maxpool_grad(const struct psk_conv *g, const float *dy, const float *x, float *dx, int ch0, int ch1);

/* Sum over every axis but the last: out[c] = sum over r ascending of x[r*cols + c], as tfjs-wasm's Sum (not a
 * psk1 kernel: its bits, NaNs included, are the wasm runtime's, computed without its transpose). */
void psk_sum_cols(const float *x, float *out, long rows, int cols);

/* tfjs-wasm's elementwise float32 kernels with its bits (not psk1 kernels; the references stay the wasm
 * runtime's): out[i] = a[i] op b[i % bn] (bn divides n: the same shape, a scalar, or a row broadcast over the
 * last axis), and unary ops. A NaN output is the first NaN operand quietened, else 0xffc00000; Relu is the
 * integer max with 0 of the bits, Step keeps a NaN's bits. */
enum { PSK_ADD, PSK_SUB, PSK_MUL, PSK_DIV };
int psk_binary(int op, const float *a, const float *b, float *out, long n, long bn);
enum { PSK_RELU, PSK_STEP, PSK_SQUARE, PSK_SQRT };
/* Both return whether out holds a NaN, except psk_unary for Relu and Step, which return -1 (not known: they
 * keep NaNs and are not scanned). */
int psk_unary(int op, const float *x, float *out, long n, float alpha);

/* The canonical runtime's (tfjs-wasm@4.22.0-simd) Conv2DBackpropFilter (float64 sums over (b, oy, ox) ascending,
 * rounded once, a NaN written 0xffc00000; rows k = tap*CI + ci in [k0, k1)) and MaxPoolGrad (its argmax and
 * dy*mask sums, NaN bits by its rule; channels [ch0, ch1)), with that runtime's bits. */
int wasm_conv2d_backprop_filter(const struct psk_conv *g, const float *x, const float *dy, float *dw, int k0, int k1);
int wasm_maxpool_grad(const struct psk_conv *g, const float *dy, const float *x, float *dx, int ch0, int ch1);

/* Whether out holds a NaN (nothing rewritten). */
int psk_scan_nan(const float *out, long n);
/* Rewrites every NaN of out as 0x7fc00000; returns whether there was one. */
int psk_canonical_nan(float *out, long n);
/* protocols/commit's row and column Merkle roots (version 2) of a rows x cols tensor of eb-byte
 * elements, rowGroup rows (colGroup columns) per leaf, into out[0..32) and out[32..64); -1 when no
 * sha256 is found in the process (OpenSSL's, which Node exports), -3 out of memory. */
int psk_axis_roots(const unsigned char *bytes, long rows, long cols, int eb, long rowGroup, long colGroup, unsigned char out[64]);
/* protocols/commit/chunked.ts's chunk tree root over n bytes in `chunk`-byte leaves sha256(prefix || piece): 0, or -1 without sha256 */
int psk_chunk_root(const unsigned char *bytes, size_t n, size_t chunk, unsigned char prefix, unsigned char out[32]);

#endif
