/* N-API entry points of the psk1 kernels. The arguments are Float32Array views
 * (usually on the wasm heap: nothing is copied) and an Int32Array of sizes.
 * Work is split by output rows over at most 2 threads; each element's
 * reduction order is the same whatever the split. Kernels return whether the
 * output they wrote holds a NaN (a boolean; undefined where they do not know). */
#include <node_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "psk-kernels.h"

#define CHECK(call) do { if ((call) != napi_ok) { napi_throw_error(env, NULL, "psk_kernels: bad arguments"); return NULL; } } while (0)

static int f32arg(napi_env env, napi_value v, float **p, size_t *n) {
  napi_typedarray_type t; size_t len; void *data; napi_value ab; size_t off;
  bool is;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_typedarray_info(env, v, &t, &len, &data, &ab, &off) != napi_ok || t != napi_float32_array) return 0;
  *p = (float *)data; *n = len;
  return 1;
}

static int i32arg(napi_env env, napi_value v, int32_t **p, size_t *n) {
  napi_typedarray_type t; size_t len; void *data; napi_value ab; size_t off;
  bool is;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_typedarray_info(env, v, &t, &len, &data, &ab, &off) != napi_ok || t != napi_int32_array) return 0;
  *p = (int32_t *)data; *n = len;
  return 1;
}

enum job_kind { J_MATMUL, J_CONV, J_BACK_INPUT, J_BACK_FILTER, J_POOL_GRAD, J_WASM_BACK_INPUT, J_WASM_BACK_FILTER, J_WASM_POOL_GRAD };
struct job {
  enum job_kind kind;
  const float *a, *b, *bias; float *out;
  int batch, aBatch, bBatch, M, N, K, ta, biasLen, relu;
  struct psk_conv g;
  int lo, hi;
  int nan; /* the rows [lo, hi) hold a NaN */
};

/* Leaving 256-bit AVX state dirty makes every later SSE instruction of the
 * process (V8's wasm code: a tfjs Sqrt ran 100x slower) pay a transition
 * penalty, so clear it after each kernel. */
static void clear_upper(void) {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx")) __asm__ volatile("vzeroupper" ::: "memory");
#endif
}

static void run_job(struct job *j) {
  switch (j->kind) {
    case J_MATMUL: j->nan = psk_matmul(j->a, j->b, j->out, j->batch, j->aBatch, j->bBatch, j->M, j->N, j->K, j->ta, j->bias, j->biasLen, j->relu, j->lo, j->hi); break;
    case J_CONV: j->nan = psk_conv2d(&j->g, j->a, j->b, j->out, j->lo, j->hi); break;
    case J_BACK_INPUT: j->nan = psk_conv2d_backprop_input(&j->g, j->a, j->b, j->out, j->lo, j->hi); break;
    case J_BACK_FILTER: j->nan = psk_conv2d_backprop_filter(&j->g, j->a, j->b, j->out, j->lo, j->hi); break;
    case J_POOL_GRAD: j->nan = psk_maxpool_grad(&j->g, j->a, j->b, j->out, j->lo, j->hi); break;
    case J_WASM_BACK_INPUT: j->nan = psk_conv2d_backprop_input(&j->g, j->a, j->b, j->out, j->lo, j->hi); break;
    case J_WASM_BACK_FILTER: j->nan = wasm_conv2d_backprop_filter(&j->g, j->a, j->b, j->out, j->lo, j->hi); break;
    case J_WASM_POOL_GRAD: j->nan = wasm_maxpool_grad(&j->g, j->a, j->b, j->out, j->lo, j->hi); break;
  }
  clear_upper();
}

static void *thread_main(void *p) { run_job((struct job *)p); return NULL; }

/* rows [0, n) over `threads` (1 or 2); the second half on a new thread when the work is worth it */
static void run_split(struct job *j, int n, int threads, double work) {
  if (threads < 2 || n < 2 || work < 2e5) { j->lo = 0; j->hi = n; run_job(j); return; }
  struct job second = *j;
  j->lo = 0; j->hi = n / 2; second.lo = n / 2; second.hi = n;
  pthread_t t;
  if (pthread_create(&t, NULL, thread_main, &second) != 0) { j->hi = n; run_job(j); return; }
  run_job(j);
  pthread_join(t, NULL);
  j->nan |= second.nan;
}

static napi_value boolean(napi_env env, int b) {
  napi_value r;
  if (napi_get_boolean(env, b != 0, &r) != napi_ok) return NULL;
  return r;
}

/* matmul(a, b, out, dims [batch, aBatch, bBatch, M, N, K, ta, tb, relu, threads], bias | null) */
static napi_value matmul(napi_env env, napi_callback_info info) {
  size_t argc = 5; napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  float *a, *b, *out, *bias = NULL; size_t na, nb, no, nbias = 0; int32_t *d; size_t nd;
  if (argc < 5 || !f32arg(env, argv[0], &a, &na) || !f32arg(env, argv[1], &b, &nb) || !f32arg(env, argv[2], &out, &no) || !i32arg(env, argv[3], &d, &nd) || nd < 10) { napi_throw_type_error(env, NULL, "matmul(a, b, out, dims, bias)"); return NULL; }
  napi_valuetype vt; CHECK(napi_typeof(env, argv[4], &vt));
  if (vt != napi_null && vt != napi_undefined && !f32arg(env, argv[4], &bias, &nbias)) { napi_throw_type_error(env, NULL, "matmul: bias must be a Float32Array or null"); return NULL; }
  struct job j = { .kind = J_MATMUL, .batch = d[0], .aBatch = d[1], .bBatch = d[2], .M = d[3], .N = d[4], .K = d[5], .ta = d[6], .relu = d[8] };
  int tb = d[7], threads = d[9];
  if ((size_t)j.aBatch * j.M * j.K != na || (size_t)j.bBatch * j.K * j.N != nb || (size_t)j.batch * j.M * j.N != no || (bias != NULL && nbias != 1 && nbias != (size_t)j.N)) { napi_throw_range_error(env, NULL, "matmul: sizes do not match"); return NULL; }
  j.a = a; j.out = out; j.bias = bias; j.biasLen = (int)nbias;
  float *packed = malloc(sizeof(float) * (size_t)(j.bBatch * psk_packed_size(j.K, j.N) + 1));
  if (packed == NULL) { napi_throw_error(env, NULL, "matmul: out of memory"); return NULL; }
  psk_pack(b, j.bBatch, j.K, j.N, tb, packed);
  j.b = packed;
  run_split(&j, j.batch * j.M, threads, (double)j.batch * j.M * j.N * j.K);
  free(packed);
  return boolean(env, j.nan);
}

static int geom(int32_t *d, struct psk_conv *g) {
  *g = (struct psk_conv){ d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12] };
  return g->B > 0 && g->H > 0 && g->W > 0 && g->CI > 0 && g->kh > 0 && g->kw > 0 && g->CO > 0 && g->OH > 0 && g->OW > 0 && g->sh > 0 && g->sw > 0;
}

/* conv2d(x, w, out), backprop input(dy, w, dx), backprop filter(x, dy, dw), maxpool grad(dy, x, dx; CO = CI);
 * geom [B,H,W,CI,kh,kw,CO,OH,OW,sh,sw,padTop,padLeft,threads] */
static napi_value conv(napi_env env, napi_callback_info info, enum job_kind kind) {
  size_t argc = 4; napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  float *p0, *p1, *out; size_t n0, n1, no; int32_t *d; size_t nd;
  if (argc < 4 || !f32arg(env, argv[0], &p0, &n0) || !f32arg(env, argv[1], &p1, &n1) || !f32arg(env, argv[2], &out, &no) || !i32arg(env, argv[3], &d, &nd) || nd < 14) { napi_throw_type_error(env, NULL, "conv(in0, in1, out, geom)"); return NULL; }
  struct job j = { .kind = kind };
  /* the canonical runtime's kernels: its Conv2DBackpropInput is psk1's sums with NaNs kept as they come */
  const int wasmRt = kind == J_WASM_BACK_INPUT || kind == J_WASM_BACK_FILTER || kind == J_WASM_POOL_GRAD;
  enum job_kind shape = kind == J_WASM_BACK_INPUT ? J_BACK_INPUT : kind == J_WASM_BACK_FILTER ? J_BACK_FILTER : kind == J_WASM_POOL_GRAD ? J_POOL_GRAD : kind;
  if (!geom(d, &j.g)) { napi_throw_range_error(env, NULL, "conv: bad geometry"); return NULL; }
  struct psk_conv *g = &j.g;
  size_t xs = (size_t)g->B * g->H * g->W * g->CI, ys = (size_t)g->B * g->OH * g->OW * g->CO, ws = (size_t)g->kh * g->kw * g->CI * g->CO;
  if (shape == J_POOL_GRAD && g->CO != g->CI) { napi_throw_range_error(env, NULL, "maxpool grad: CO must equal CI"); return NULL; }
  size_t want0 = shape == J_BACK_INPUT || shape == J_POOL_GRAD ? ys : xs;
  size_t want1 = shape == J_CONV || shape == J_BACK_INPUT ? ws : shape == J_POOL_GRAD ? xs : ys;
  size_t wantOut = shape == J_CONV ? ys : shape == J_BACK_INPUT || shape == J_POOL_GRAD ? xs : ws;
  if (n0 != want0 || n1 != want1 || no != wantOut) { napi_throw_range_error(env, NULL, "conv: sizes do not match"); return NULL; }
  j.a = p0; j.b = p1; j.out = out; j.g.raw = wasmRt;
  int threads = d[13];
  double work = (double)ys * g->kh * g->kw * g->CI;
  if (shape == J_CONV) run_split(&j, g->B * g->OH, threads, work);
  else if (shape == J_BACK_INPUT) run_split(&j, g->B * g->H, threads, work);
  else if (shape == J_POOL_GRAD) run_split(&j, g->CI, threads, (double)ys * g->kh * g->kw);
  else run_split(&j, g->kh * g->kw * g->CI, threads, work);
  if (j.nan < 0) { napi_throw_error(env, NULL, "conv: out of memory"); return NULL; }
  return boolean(env, j.nan);
}

static napi_value conv2d(napi_env env, napi_callback_info info) { return conv(env, info, J_CONV); }
static napi_value backInput(napi_env env, napi_callback_info info) { return conv(env, info, J_BACK_INPUT); }
static napi_value backFilter(napi_env env, napi_callback_info info) { return conv(env, info, J_BACK_FILTER); }
static napi_value poolGrad(napi_env env, napi_callback_info info) { return conv(env, info, J_POOL_GRAD); }
static napi_value wasmBackInput(napi_env env, napi_callback_info info) { return conv(env, info, J_WASM_BACK_INPUT); }
static napi_value wasmBackFilter(napi_env env, napi_callback_info info) { return conv(env, info, J_WASM_BACK_FILTER); }
static napi_value wasmPoolGrad(napi_env env, napi_callback_info info) { return conv(env, info, J_WASM_POOL_GRAD); }

/* hasNaN(v): whether a Float32Array holds any NaN (the NaN watch's scan of each kernel output, in place on the
 * wasm heap); blocks without an early exit so the compare vectorises, x != x is true exactly for NaN */
static napi_value hasNaN(napi_env env, napi_callback_info info) {
  size_t argc = 1; napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  float *x; size_t n;
  if (argc < 1 || !f32arg(env, argv[0], &x, &n)) { napi_throw_type_error(env, NULL, "hasNaN(v)"); return NULL; }
  int found = 0;
  for (size_t i = 0; i < n && !found; i += 1024) {
    size_t end = i + 1024 < n ? i + 1024 : n;
    int acc = 0;
    for (size_t k = i; k < end; k++) acc |= x[k] != x[k];
    found = acc;
  }
  napi_value r; CHECK(napi_get_boolean(env, found != 0, &r));
  return r;
}

/* sumCols(x, out, [rows, cols]) */
static napi_value sumCols(napi_env env, napi_callback_info info) {
  size_t argc = 3; napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  float *x, *out; size_t nx, no; int32_t *d; size_t nd;
  if (argc < 3 || !f32arg(env, argv[0], &x, &nx) || !f32arg(env, argv[1], &out, &no) || !i32arg(env, argv[2], &d, &nd) || nd < 2) { napi_throw_type_error(env, NULL, "sumCols(x, out, dims)"); return NULL; }
  if (d[0] < 0 || d[1] <= 0 || (size_t)d[0] * (size_t)d[1] != nx || (size_t)d[1] != no) { napi_throw_range_error(env, NULL, "sumCols: sizes do not match"); return NULL; }
  psk_sum_cols(x, out, d[0], d[1]);
  clear_upper();
  return NULL;
}

static int int_arg(napi_env env, napi_value v, int32_t *out) { return napi_get_value_int32(env, v, out) == napi_ok; }

/* binary(a, b, out, op): out[i] = a[i] op b[i % b.length] (tfjs-wasm's Add, Sub, Multiply, RealDiv bits) */
static napi_value binary(napi_env env, napi_callback_info info) {
  size_t argc = 4; napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  float *a, *b, *out; size_t na, nb, no; int32_t op;
  if (argc < 4 || !f32arg(env, argv[0], &a, &na) || !f32arg(env, argv[1], &b, &nb) || !f32arg(env, argv[2], &out, &no) || !int_arg(env, argv[3], &op)) { napi_throw_type_error(env, NULL, "binary(a, b, out, op)"); return NULL; }
  if (op < PSK_ADD || op > PSK_DIV || na != no || nb == 0 || no % nb != 0) { napi_throw_range_error(env, NULL, "binary: bad op or sizes"); return NULL; }
  int nan = psk_binary(op, a, b, out, (long)no, (long)nb);
  clear_upper();
  return boolean(env, nan);
}

/* unary(x, out, op, alpha): tfjs-wasm's Relu, Step (alpha), Square, Sqrt bits */
static napi_value unary(napi_env env, napi_callback_info info) {
  size_t argc = 4; napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  float *x, *out; size_t nx, no; int32_t op; double alpha;
  if (argc < 4 || !f32arg(env, argv[0], &x, &nx) || !f32arg(env, argv[1], &out, &no) || !int_arg(env, argv[2], &op) || napi_get_value_double(env, argv[3], &alpha) != napi_ok) { napi_throw_type_error(env, NULL, "unary(x, out, op, alpha)"); return NULL; }
  if (op < PSK_RELU || op > PSK_SQRT || nx != no) { napi_throw_range_error(env, NULL, "unary: bad op or sizes"); return NULL; }
  int nan = psk_unary(op, x, out, (long)no, (float)alpha);
  clear_upper();
  return nan < 0 ? NULL : boolean(env, nan);
}

static int u8arg(napi_env env, napi_value v, unsigned char **p, size_t *n) {
  napi_typedarray_type t; size_t len; void *data; napi_value ab; size_t off;
  bool is;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_typedarray_info(env, v, &t, &len, &data, &ab, &off) != napi_ok || t != napi_uint8_array) return 0;
  *p = (unsigned char *)data; *n = len;
  return 1;
}

/* axisRoots(bytes, [rows, cols, elementBytes, rowGroup, colGroup], out): a tensor's row and column Merkle roots
 * (protocols/commit v2) into out[0..64); false when this Node exports no sha256 to addons */
static napi_value axisRoots(napi_env env, napi_callback_info info) {
  size_t argc = 3; napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *bytes, *out; size_t nb, no; int32_t *d; size_t nd;
  if (argc < 3 || !u8arg(env, argv[0], &bytes, &nb) || !i32arg(env, argv[1], &d, &nd) || nd < 5 || !u8arg(env, argv[2], &out, &no) || no < 64) { napi_throw_type_error(env, NULL, "axisRoots(bytes, dims, out)"); return NULL; }
  if (d[0] < 0 || d[1] < 0 || (d[2] != 1 && d[2] != 4) || d[3] < 1 || d[4] < 1 || (size_t)d[0] * (size_t)d[1] * (size_t)d[2] != nb) { napi_throw_range_error(env, NULL, "axisRoots: sizes do not match"); return NULL; }
  int r = psk_axis_roots(bytes, d[0], d[1], d[2], d[3], d[4], out);
  if (r < -1) { napi_throw_error(env, NULL, "axisRoots: out of memory"); return NULL; }
  return boolean(env, r == 0);
}

/* chunkRoot(bytes, [chunkBytes, prefix], out): protocols/commit/chunked.ts's chunk tree root into out[0..32);
 * false when this Node exports no sha256 to addons */
static napi_value chunkRoot(napi_env env, napi_callback_info info) {
  size_t argc = 3; napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *bytes, *out; size_t nb, no; int32_t *d; size_t nd;
  if (argc < 3 || !u8arg(env, argv[0], &bytes, &nb) || !i32arg(env, argv[1], &d, &nd) || nd < 2 || !u8arg(env, argv[2], &out, &no) || no < 32) { napi_throw_type_error(env, NULL, "chunkRoot(bytes, [chunkBytes, prefix], out)"); return NULL; }
  if (d[0] < 1 || d[1] < 0 || d[1] > 255) { napi_throw_range_error(env, NULL, "chunkRoot: bad chunk size or prefix"); return NULL; }
  int r = psk_chunk_root(bytes, nb, (size_t)d[0], (unsigned char)d[1], out);
  if (r < -1) { napi_throw_error(env, NULL, "chunkRoot: out of memory"); return NULL; }
  return boolean(env, r == 0);
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    { "hasNaN", NULL, hasNaN, NULL, NULL, NULL, napi_default, NULL },
    { "matmul", NULL, matmul, NULL, NULL, NULL, napi_default, NULL },
    { "conv2d", NULL, conv2d, NULL, NULL, NULL, napi_default, NULL },
    { "conv2dBackpropInput", NULL, backInput, NULL, NULL, NULL, napi_default, NULL },
    { "conv2dBackpropFilter", NULL, backFilter, NULL, NULL, NULL, napi_default, NULL },
    { "maxPoolGrad", NULL, poolGrad, NULL, NULL, NULL, napi_default, NULL },
    { "wasmConv2dBackpropInput", NULL, wasmBackInput, NULL, NULL, NULL, napi_default, NULL },
    { "wasmConv2dBackpropFilter", NULL, wasmBackFilter, NULL, NULL, NULL, napi_default, NULL },
    { "wasmMaxPoolGrad", NULL, wasmPoolGrad, NULL, NULL, NULL, napi_default, NULL },
    { "sumCols", NULL, sumCols, NULL, NULL, NULL, napi_default, NULL },
    { "binary", NULL, binary, NULL, NULL, NULL, napi_default, NULL },
    { "unary", NULL, unary, NULL, NULL, NULL, napi_default, NULL },
    { "axisRoots", NULL, axisRoots, NULL, NULL, NULL, napi_default, NULL },
    { "chunkRoot", NULL, chunkRoot, NULL, NULL, NULL, napi_default, NULL }
  };
  napi_value v; napi_create_string_utf8(env, "psk1", NAPI_AUTO_LENGTH, &v);
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  napi_set_named_property(env, exports, "version", v);
  /* a build without optimisation is 4x slower (same bits): reported so a test can catch it */
#ifdef __OPTIMIZE__
  napi_get_boolean(env, true, &v);
#else
  napi_get_boolean(env, false, &v);
#endif
  napi_set_named_property(env, exports, "optimized", v);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
