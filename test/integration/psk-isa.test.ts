import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

// The addon carries an AVX-512, an AVX2 and a baseline (SSE) version of each
// kernel and the CPU picks one when it loads, so a machine with AVX-512 runs
// only the first. A solver and a verifier on different CPUs must still get the
// same bits: here the addon is built again with only the AVX2 and baseline
// versions, and with only the baseline one, and each build's kernels are run
// against the JavaScript kernels (the references' bits) in its own process,
// through the same self-test every training process runs before it trusts them;
// and its state roots' row and column roots against protocols/commit's, and the
// canonical runtime's native conv gradients through their own self-test.

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

function build (clones: string): string {
  const r = spawnSync('npm', ['run', '--silent', 'build:kernels', '--', '--dir', dirs[dirs.length - 1]], {
    // make hands CFLAGS to a shell: the quotes of the clone names are escaped for it
    encoding: 'utf8', env: { ...process.env, CFLAGS: `-DPSK_CLONES=${clones.replaceAll('"', '\\"')}` }
  })
  expect(r.stdout + r.stderr, 'the build').toMatch(/psk1 native kernels built/)
  return join(dirs[dirs.length - 1], 'build', 'Release', 'psk_kernels.node')
}

const symbols = (file: string): string => spawnSync('nm', [file], { encoding: 'utf8' }).stdout

/** The self-test of `file`'s kernels on 1 and 2 threads, in a process of its own. */
function selfTest (file: string): [...Array<{ threads: number, cases: number, mismatches: string[] }>, { roots: boolean[], grads: string }] {
  const script = `
    const { loadNative, JS_IMPL } = await import(${JSON.stringify(join(process.cwd(), 'dist/node/train/psk-native.js'))})
    const { pskSelfTest } = await import(${JSON.stringify(join(process.cwd(), 'dist/node/train/psk-selftest.js'))})
    const out = []
    for (const t of [1, 2]) { const n = loadNative(t); if ('error' in n) throw new Error(n.error); out.push({ threads: n.threads, ...pskSelfTest(n, JS_IMPL) }) }
    // the state roots' row and column roots: such a build hashes through OpenSSL (its 16-lane sha256 needs AVX-512)
    const { nativeAxisRoots } = await import(${JSON.stringify(join(process.cwd(), 'dist/node/train/psk-addon.js'))})
    const { commitTensor, axisLayout, matrixView } = await import(${JSON.stringify(join(process.cwd(), 'dist/protocols/commit/tensor.js'))})
    const axis = nativeAxisRoots()
    const roots = []
    for (const [shape, dtype] of [[[784, 128], 'float32'], [[45, 512], 'float32'], [[333, 97], 'float32'], [[70, 30], 'bool'], [[7], 'float32']]) {
      const n = shape.reduce((a, b) => a * b, 1)
      const values = dtype === 'bool' ? Uint8Array.from({ length: n }, (_, i) => (i * 7) % 3 === 0 ? 1 : 0) : Float32Array.from({ length: n }, (_, i) => Math.sin(i))
      const { rows, cols } = matrixView(shape)
      const got = new Uint8Array(64)
      const ok = axis(new Uint8Array(values.buffer), Int32Array.of(rows, cols, dtype === 'bool' ? 1 : 4, axisLayout(dtype, shape, 'row').group, axisLayout(dtype, shape, 'col').group), got)
      const c = commitTensor({ shape, dtype, values })
      roots.push(ok && Buffer.from(got).equals(Buffer.concat([c.rowRoot, c.colRoot])))
    }
    // the canonical runtime's native conv gradients: its backend registers them only if their self-test passes
    const { initBackend } = await import(${JSON.stringify(join(process.cwd(), 'dist/node/train/backend.js'))})
    const info = await initBackend('auto', 'tfjs-wasm@4.22.0-simd')
    out.push({ roots, grads: info.gradKernels })
    console.log(JSON.stringify(out))`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, PROOFSWARM_PSK_ADDON: file } })
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout.trim().split('\n').at(-1) as string)
}

describe('psk1 kernels: every instruction-set version gives the reference\'s bits', () => {
  const variants = [['AVX2 and baseline', '"avx2","default"', 'avx512', /\.avx2/], ['baseline only', '"default"', 'avx', /./]] as const
  for (const [name, clones, absent, present] of variants) {
    it(`${name}: the build has no ${absent} code, and its kernels equal the JavaScript ones on 1 and 2 threads`, async () => {
      dirs.push(await mkdtemp(join(tmpdir(), 'ps-psk-isa-')))
      const file = build(clones)
      expect(symbols(file)).not.toMatch(new RegExp(`\\.${absent}`))
      expect(symbols(file)).toMatch(present)
      const got = selfTest(file)
      const { roots, grads } = got.pop() as { roots: boolean[], grads: string }
      expect(grads, 'the canonical runtime\'s native conv gradients pass their self-test').toBe('native')
      expect(roots, 'the addon\'s row and column roots equal protocols/commit\'s').toEqual([true, true, true, true, true])
      const runs = got as Array<{ threads: number, cases: number, mismatches: string[] }>
      expect(runs.map(r => r.threads)).toEqual([1, 2])
      for (const r of runs) {
        expect(r.cases).toBe(31 + 32 + 10) // psk1 kernels, then the elementwise ones (psk-selftest.ts)
        expect(r.mismatches).toEqual([])
      }
    }, 120_000)
  }
})
