/* Private to the psk1 kernels' C files: the vector types and helpers they share. See psk-kernels.h for what
 * every kernel guarantees. Built with -ffp-contract=off and without -ffast-math: every a*b and acc+p in the
 * kernels is one IEEE float32 operation. */
#ifndef PSK_SIMD_H
#define PSK_SIMD_H
#include "psk-kernels.h"
#include <stdlib.h>
#include <string.h>

#if defined(__FAST_MATH__) || defined(__FP_FAST_FMAF)
#error "the psk1 kernels must be built without -ffast-math and without FMA contraction"
#endif

typedef float v8f __attribute__((vector_size(32)));
/* PSK_CLONES (a build flag) narrows the clones, so that a machine with AVX-512 can test the others */
#ifndef PSK_CLONES
#define PSK_CLONES "avx512f", "avx2", "default"
#endif
#define CLONES __attribute__((target_clones(PSK_CLONES)))

/* macros, not functions: an out-of-line helper between target clones would pass
 * vectors by value across two ABIs */
#define ld8(p) __extension__({ v8f v_; memcpy(&v_, (p), sizeof v_); v_; })
#define st8(p, v) do { v8f s_ = (v); memcpy((p), &s_, sizeof s_); } while (0)
#define splat(x) __extension__({ float x_ = (x); (v8f){ x_, x_, x_, x_, x_, x_, x_, x_ }; })
typedef float v16f __attribute__((vector_size(64)));
#define ld16(p) __extension__({ v16f v_; memcpy(&v_, (p), sizeof v_); v_; })
#define st16(p, v) do { v16f s_ = (v); memcpy((p), &s_, sizeof s_); } while (0)
#define splat16(x) __extension__({ float x_ = (x); (v16f){ x_, x_, x_, x_, x_, x_, x_, x_, x_, x_, x_, x_, x_, x_, x_, x_ }; })

/* always inlined with constant block sizes, so that a block's accumulators stay in registers */
#define AI static inline __attribute__((always_inline))
#endif
