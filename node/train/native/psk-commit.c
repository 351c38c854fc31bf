/* The row and column Merkle roots of protocols/commit's tensor commitment
 * (version 2), for the training loop's state roots: every leaf hashed straight
 * from the tensor's bytes (the 0x00 prefix fed to the hash first, no copy),
 * the columns from one transposed copy, and runs of equal-length leaves and
 * nodes hashed 16 at a time (psk-sha.c, AVX-512) where the CPU can, else by
 * OpenSSL's sha256, which Node exports to addons. OpenSSL is looked up at run
 * time, so an addon built against a Node without those symbols still loads
 * (and reports -1 here). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "psk-kernels.h"
#include "psk-sha.h"

/* OpenSSL's SHA256_CTX is 112 bytes; room to spare, aligned */
typedef struct { _Alignas(16) unsigned char opaque[256]; } sha_ctx;
typedef int (*sha_init_fn)(void *);
typedef int (*sha_update_fn)(void *, const void *, size_t);
typedef int (*sha_final_fn)(unsigned char *, void *);
static sha_init_fn sha_init;
static sha_update_fn sha_update;
static sha_final_fn sha_final;
static int sha_state; /* 0 unknown, 1 found, -1 missing */

static int sha_ready(void) {
  if (sha_state == 0) {
    sha_init = (sha_init_fn)dlsym(RTLD_DEFAULT, "SHA256_Init");
    sha_update = (sha_update_fn)dlsym(RTLD_DEFAULT, "SHA256_Update");
    sha_final = (sha_final_fn)dlsym(RTLD_DEFAULT, "SHA256_Final");
    sha_state = sha_init && sha_update && sha_final ? 1 : -1;
  }
  return sha_state == 1;
}

/* the digests of n messages into out[32 i]: runs of at least X16_MIN equal-length
 * messages go 16 at a time through psk_sha256_x16 (which costs 16 lanes however
 * many are used: below ~11 OpenSSL's one-at-a-time is cheaper), the rest through OpenSSL */
#define X16_MIN 11
static void hash_all(const psk_msg *m, long n, unsigned char *out) {
  int wide = psk_sha_x16_ready();
  long i = 0;
  while (i < n) {
    long run = 1;
    size_t len = (size_t)m[i].pre + m[i].n;
    if (wide) while (i + run < n && run < 16 && (size_t)m[i + run].pre + m[i + run].n == len) run++;
    if (wide && run >= X16_MIN) {
      psk_sha256_x16(m + i, (int)run, (unsigned char (*)[32])(out + 32 * i));
      i += run;
      continue;
    }
    sha_ctx c;
    sha_init(&c);
    if (m[i].pre) sha_update(&c, &m[i].prefix, 1);
    sha_update(&c, m[i].data, m[i].n);
    sha_final(out + 32 * i, &c);
    i++;
  }
}

/* merkleRoot over `n` leaf digests in place (protocols/commit/merkle.ts: odd nodes pair with the zero hash);
 * msgs has room for (n + 1) / 2 messages. A pair's two digests lie side by side (0x01 || left || right
 * read in place); each level's digests are written only after its messages are read (hash_all
 * writes digest i below pair i's bytes and a batch stores its digests after reading all its pairs). */
static void merkle(unsigned char *level, long n, psk_msg *msgs, unsigned char out[32]) {
  if (n == 0) { memset(out, 0, 32); return; }
  unsigned char odd[64];
  while (n > 1) {
    long m = (n + 1) / 2;
    for (long i = 0; i < m; i++) {
      msgs[i].prefix = 1; msgs[i].pre = 1; msgs[i].n = 64;
      if (2 * i + 1 < n) msgs[i].data = level + 64 * i;
      else { memcpy(odd, level + 64 * i, 32); memset(odd + 32, 0, 32); msgs[i].data = odd; }
    }
    hash_all(msgs, m, level);
    n = m;
  }
  memcpy(out, level, 32);
}

/* the [rows, cols] matrix of 32-bit elements at src, transposed into dst, in 16x16 tiles */
static void transpose32(const uint32_t *src, uint32_t *dst, long rows, long cols) {
  for (long r0 = 0; r0 < rows; r0 += 16) {
    long r1 = r0 + 16 < rows ? r0 + 16 : rows;
    for (long c0 = 0; c0 < cols; c0 += 16) {
      long c1 = c0 + 16 < cols ? c0 + 16 : cols;
      for (long r = r0; r < r1; r++) for (long c = c0; c < c1; c++) dst[c * rows + r] = src[r * cols + c];
    }
  }
}

int psk_axis_roots(const unsigned char *bytes, long rows, long cols, int eb, long rowGroup, long colGroup, unsigned char out[64]) {
  if (!sha_ready()) return -1;
  if (rows < 0 || cols < 0 || (eb != 1 && eb != 4) || rowGroup < 1 || colGroup < 1) return -2;
  long rowLeaves = (rows + rowGroup - 1) / rowGroup, colLeaves = (cols + colGroup - 1) / colGroup;
  long most = rowLeaves > colLeaves ? rowLeaves : colLeaves;
  size_t total = (size_t)rows * (size_t)cols * (size_t)eb;
  unsigned char *digests = malloc(32 * (size_t)(most > 0 ? most : 1));
  psk_msg *msgs = malloc(sizeof(psk_msg) * (size_t)(most > 0 ? most : 1));
  /* the whole tensor transposed: each column leaf's bytes are then contiguous */
  unsigned char *t = cols > 1 ? malloc(total > 0 ? total : 1) : NULL;
  if (digests == NULL || msgs == NULL || (cols > 1 && t == NULL)) { free(digests); free(msgs); free(t); return -3; }
  size_t rowBytes = (size_t)cols * (size_t)eb;
  for (long i = 0; i < rowLeaves; i++) {
    long first = i * rowGroup, n = rows - first < rowGroup ? rows - first : rowGroup;
    msgs[i] = (psk_msg){ bytes + (size_t)first * rowBytes, (size_t)n * rowBytes, 0, 1 };
  }
  hash_all(msgs, rowLeaves, digests);
  merkle(digests, rowLeaves, msgs, out);
  const unsigned char *cb = bytes;
  if (t != NULL) {
    if (eb == 4) transpose32((const uint32_t *)bytes, (uint32_t *)t, rows, cols);
    else for (long r = 0; r < rows; r++) for (long c = 0; c < cols; c++) t[(size_t)c * (size_t)rows + (size_t)r] = bytes[(size_t)r * rowBytes + (size_t)c];
    cb = t;
  }
  size_t colBytes = (size_t)rows * (size_t)eb;
  for (long i = 0; i < colLeaves; i++) {
    long first = i * colGroup, n = cols - first < colGroup ? cols - first : colGroup;
    msgs[i] = (psk_msg){ cb + (size_t)first * colBytes, (size_t)n * colBytes, 0, 1 };
  }
  hash_all(msgs, colLeaves, digests);
  merkle(digests, colLeaves, msgs, out + 32);
  free(digests); free(msgs); free(t);
  return 0;
}

/* the chunk tree root of protocols/commit/chunked.ts: leaves sha256(prefix || piece) over the `chunk`-byte
 * pieces of bytes (the last one shorter), hashed in place; merkleRoot over them (the zero hash for none) */
int psk_chunk_root(const unsigned char *bytes, size_t n, size_t chunk, unsigned char prefix, unsigned char out[32]) {
  if (!sha_ready()) return -1;
  if (chunk < 1) return -2;
  long leaves = (long)((n + chunk - 1) / chunk);
  unsigned char *digests = malloc(32 * (size_t)(leaves > 0 ? leaves : 1));
  psk_msg *msgs = malloc(sizeof(psk_msg) * (size_t)(leaves > 0 ? leaves : 1));
  if (digests == NULL || msgs == NULL) { free(digests); free(msgs); return -3; }
  for (long i = 0; i < leaves; i++) {
    size_t at = (size_t)i * chunk;
    msgs[i] = (psk_msg){ bytes + at, n - at < chunk ? n - at : chunk, prefix, 1 };
  }
  hash_all(msgs, leaves, digests);
  merkle(digests, leaves, msgs, out);
  free(digests); free(msgs);
  return 0;
}
