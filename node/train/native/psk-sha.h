#ifndef PSK_SHA_H
#define PSK_SHA_H
#include <stddef.h>

/* a SHA-256 message: `pre` (0 or 1) copies of `prefix`, then n bytes at data */
typedef struct { const unsigned char *data; size_t n; unsigned char prefix; int pre; } psk_msg;

/* whether this CPU (and OS) has what psk_sha256_x16 needs: AVX-512 F and BW */
int psk_sha_x16_ready(void);
/* the digests of `count` (1..16) messages, all of the same length, into out[0..count) */
void psk_sha256_x16(const psk_msg *m, int count, unsigned char (*out)[32]);

#endif
