/* SHA-256 of 16 messages at once, one per 32-bit lane of AVX-512 registers.
 * Where the state roots' time goes is sha256 itself: OpenSSL's SHA-NI code
 * hashes ~1.7 GB/s here, bound by the round instruction's throughput (two
 * messages interleaved through SHA-NI were no faster). Sixteen lanes of plain
 * vector arithmetic hash ~2.6 GB/s on the same core (AMD EPYC, AVX-512),
 * about 1.55x. The digests are plain SHA-256 (test/unit/train/fast-commit.test.ts
 * compares every root with protocols/commit). A message is an optional one-byte
 * prefix and n bytes read in place, so a Merkle leaf (0x00 || bytes) or node
 * (0x01 || left || right) needs no copy. */
#include <stdint.h>
#include <string.h>
#include "psk-sha.h"

/* a build with narrowed kernel clones (PSK_CLONES: the tests of the other instruction sets) leaves it
 * out too, so that such a build hashes through OpenSSL as a CPU without AVX-512 would */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(PSK_CLONES)
#include <cpuid.h>
#include <immintrin.h>
static const uint32_t K16[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
static const uint32_t IV[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

int psk_sha_x16_ready(void) {
  static int state; /* 0 unknown, 1 yes, -1 no */
  if (state == 0) {
    unsigned a, b, c, d, lo, hi;
    /* AVX-512 F and BW, and the OS saving the zmm registers (XCR0: SSE, AVX, opmask, zmm) */
    int ok = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE);
    if (ok) { __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0)); ok = (lo & 0xE6) == 0xE6; }
    ok = ok && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) && (b & bit_AVX512BW);
    state = ok ? 1 : -1;
  }
  return state == 1;
}

static size_t nblocks(const psk_msg *m) { return ((size_t)m->pre + m->n + 9 + 63) / 64; }
static const unsigned char *blk(const psk_msg *m, size_t k, size_t total, unsigned char tmp[64]) {
  size_t pre = (size_t)m->pre, len = pre + m->n, start = 64 * k;
  if (start >= pre && start + 64 <= len) return m->data + (start - pre);
  memset(tmp, 0, 64);
  for (size_t p = start; p < start + 64 && p < pre; p++) tmp[p - start] = m->prefix;
  size_t from = start > pre ? start : pre, to = start + 64 < len ? start + 64 : len;
  if (to > from) memcpy(tmp + (from - start), m->data + (from - pre), to - from);
  if (len >= start && len < start + 64) tmp[len - start] = 0x80;
  if (k == total - 1) { uint64_t bits = (uint64_t)len * 8; for (int i = 0; i < 8; i++) tmp[63 - i] = (unsigned char)(bits >> (8 * i)); }
  return tmp;
}

#define T16 __attribute__((target("avx512f,avx512bw")))
#define ROR(x, n) _mm512_ror_epi32(x, n)
#define ADD(x, y) _mm512_add_epi32(x, y)

/* 16x16 transpose of dwords: r[i] = 64 bytes of lane i; out w[j] = dword j of every lane */
T16 static inline void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) { t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]); t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]); }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]); r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]); r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  /* now within each 128-bit lane q of r[4g+s]: dword j of rows 4g..4g+3 at 128-lane q, j = 4q + s' */
  for (int i = 0; i < 4; i++) {
    t[i] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0x88); t[i + 4] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0x88); t[i + 12] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0xDD);
  }
  for (int i = 0; i < 4; i++) {
    r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88); r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xDD);
    r[i + 4] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0x88); r[i + 12] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0xDD);
  }
}

/* count (1..16) messages of the same length; lanes past count hash message 0 again, unused */
T16 void psk_sha256_x16(const psk_msg *m, int count, unsigned char (*out)[32]) {
  unsigned char tmp[16][64];
  const psk_msg *lane[16];
  for (int i = 0; i < 16; i++) lane[i] = &m[i < count ? i : 0];
  size_t total = nblocks(&m[0]);
  __m512i s[8];
  for (int i = 0; i < 8; i++) s[i] = _mm512_set1_epi32((int)IV[i]);
  const __m512i bswap = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
  for (size_t k = 0; k < total; k++) {
    __m512i w[16];
    for (int i = 0; i < 16; i++) w[i] = _mm512_loadu_si512(blk(lane[i], k, total, tmp[i]));
    transpose16(w);
    for (int i = 0; i < 16; i++) w[i] = _mm512_shuffle_epi8(w[i], bswap);
    __m512i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int t = 0; t < 64; t++) {
      __m512i wt;
      if (t < 16) wt = w[t];
      else {
        __m512i w15 = w[(t - 15) & 15], w2 = w[(t - 2) & 15];
        __m512i s0 = _mm512_ternarylogic_epi32(ROR(w15, 7), ROR(w15, 18), _mm512_srli_epi32(w15, 3), 0x96);
        __m512i s1 = _mm512_ternarylogic_epi32(ROR(w2, 17), ROR(w2, 19), _mm512_srli_epi32(w2, 10), 0x96);
        wt = ADD(ADD(w[t & 15], s0), ADD(w[(t - 7) & 15], s1));
        w[t & 15] = wt;
      }
      __m512i S1 = _mm512_ternarylogic_epi32(ROR(e, 6), ROR(e, 11), ROR(e, 25), 0x96);
      __m512i ch = _mm512_ternarylogic_epi32(e, f, g, 0xCA);
      __m512i t1 = ADD(ADD(h, S1), ADD(ch, ADD(wt, _mm512_set1_epi32((int)K16[t]))));
      __m512i S0 = _mm512_ternarylogic_epi32(ROR(a, 2), ROR(a, 13), ROR(a, 22), 0x96);
      __m512i mj = _mm512_ternarylogic_epi32(a, b, c, 0xE8);
      h = g; g = f; f = e; e = ADD(d, t1); d = c; c = b; b = a; a = ADD(t1, ADD(S0, mj));
    }
    s[0] = ADD(s[0], a); s[1] = ADD(s[1], b); s[2] = ADD(s[2], c); s[3] = ADD(s[3], d);
    s[4] = ADD(s[4], e); s[5] = ADD(s[5], f); s[6] = ADD(s[6], g); s[7] = ADD(s[7], h);
  }
  uint32_t v[8][16];
  for (int i = 0; i < 8; i++) _mm512_storeu_si512(v[i], s[i]);
  for (int l = 0; l < count; l++) for (int i = 0; i < 8; i++) {
    uint32_t x = v[i][l];
    out[l][4 * i] = (unsigned char)(x >> 24); out[l][4 * i + 1] = (unsigned char)(x >> 16); out[l][4 * i + 2] = (unsigned char)(x >> 8); out[l][4 * i + 3] = (unsigned char)x;
  }
}

#else
int psk_sha_x16_ready(void) { return 0; }
void psk_sha256_x16(const psk_msg *m, int count, unsigned char (*out)[32]) { (void)m; (void)count; (void)out; }
#endif
