/* The row and column Merkle roots of protocols/commit's tensor commitment
 * (version 2), for the training loop's state roots: every leaf hashed straight
 * from the tensor's bytes (the 0x00 prefix fed to the hash first, no copy),
 * column leaves gathered into one small buffer. sha256 is OpenSSL's, which
 * Node exports to addons; it is looked up at run time, so an addon built
 * against a Node without those symbols still loads (and reports -1 here). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "psk-kernels.h"

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

static void leaf_hash(const unsigned char *data, size_t n, unsigned char out[32]) {
  static const unsigned char prefix = 0;
  sha_ctx c;
  sha_init(&c); sha_update(&c, &prefix, 1); sha_update(&c, data, n); sha_final(out, &c);
}

/* merkleRoot over `n` leaf digests in place (protocols/commit/merkle.ts: odd nodes pair with the zero hash) */
static void merkle(unsigned char *level, long n, unsigned char out[32]) {
  static const unsigned char zero[32];
  if (n == 0) { memset(out, 0, 32); return; }
  unsigned char node[65];
  node[0] = 1;
  while (n > 1) {
    long m = (n + 1) / 2;
    for (long i = 0; i < m; i++) {
      memcpy(node + 1, level + 64 * i, 32);
      memcpy(node + 33, 2 * i + 1 < n ? level + 32 * (2 * i + 1) : zero, 32);
      sha_ctx c;
      sha_init(&c); sha_update(&c, node, 65); sha_final(level + 32 * i, &c);
    }
    n = m;
  }
  memcpy(out, level, 32);
}

int psk_axis_roots(const unsigned char *bytes, long rows, long cols, int eb, long rowGroup, long colGroup, unsigned char out[64]) {
  if (!sha_ready()) return -1;
  if (rows < 0 || cols < 0 || (eb != 1 && eb != 4) || rowGroup < 1 || colGroup < 1) return -2;
  long rowLeaves = (rows + rowGroup - 1) / rowGroup, colLeaves = (cols + colGroup - 1) / colGroup;
  long most = rowLeaves > colLeaves ? rowLeaves : colLeaves;
  size_t colBytes = (size_t)colGroup * (size_t)rows * (size_t)eb;
  unsigned char *digests = malloc(32 * (size_t)(most > 0 ? most : 1));
  unsigned char *gather = malloc(colBytes > 0 ? colBytes : 1);
  if (digests == NULL || gather == NULL) { free(digests); free(gather); return -3; }
  size_t rowBytes = (size_t)cols * (size_t)eb;
  for (long i = 0; i < rowLeaves; i++) {
    long first = i * rowGroup, n = rows - first < rowGroup ? rows - first : rowGroup;
    leaf_hash(bytes + (size_t)first * rowBytes, (size_t)n * rowBytes, digests + 32 * i);
  }
  merkle(digests, rowLeaves, out);
  for (long i = 0; i < colLeaves; i++) {
    long first = i * colGroup, n = cols - first < colGroup ? cols - first : colGroup;
    if (eb == 4) {
      uint32_t *g = (uint32_t *)gather;
      for (long j = 0; j < n; j++) {
        const unsigned char *src = bytes + (size_t)(first + j) * 4;
        for (long r = 0; r < rows; r++) memcpy(g + j * rows + r, src + (size_t)r * rowBytes, 4);
      }
    } else {
      for (long j = 0; j < n; j++) for (long r = 0; r < rows; r++) gather[j * rows + r] = bytes[(size_t)r * rowBytes + (size_t)(first + j)];
    }
    leaf_hash(gather, (size_t)n * (size_t)rows * (size_t)eb, digests + 32 * i);
  }
  merkle(digests, colLeaves, out + 32);
  free(digests); free(gather);
  return 0;
}
