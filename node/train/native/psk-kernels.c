/* See psk-kernels.h: NaN canonicalisation and MatMul. */
#include "psk-simd.h"

/* written as a select, not a conditional store, so that it vectorises */
/* read-only unless a block holds a NaN: rewriting every element cost a second write pass over outputs of a MB or more */
CLONES int psk_scan_nan(const float *out, long n) {
  const uint32_t *u = (const uint32_t *)out;
  int found = 0;
  for (long i = 0; i < n; i++) found |= (u[i] & 0x7fffffffu) > 0x7f800000u;
  return found;
}

CLONES int psk_canonical_nan(float *out, long n) {
  uint32_t *u = (uint32_t *)out;
  int found = 0;
  for (long i = 0; i < n; i += 1024) {
    long end = i + 1024 < n ? i + 1024 : n;
    int any = 0;
    for (long k = i; k < end; k++) any |= (u[k] & 0x7fffffffu) > 0x7f800000u;
    if (any) for (long k = i; k < end; k++) u[k] = (u[k] & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : u[k];
    found |= any;
  }
  return found;
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

int psk_matmul(const float *a, const float *bp, float *out, int batch, int aBatch, int bBatch,
                int M, int N, int K, int ta, const float *bias, int biasLen, int relu,
                int row0, int row1) {
  int nan = 0;
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
      nan |= psk_canonical_nan(c, N);
    }
  }
  return nan;
}
