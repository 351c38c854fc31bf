// A route to faster training, measured on both wasm runtimes: the gradients of
// a dense or conv layer are BatchMatMuls with a transposed operand
// (dW = xᵀ·dy, dx = dy·Wᵀ). On tfjs-wasm@4.22.0-simd, tfjs-backend-wasm 4.22
// computes them in its own blocked loop, while a MatMul without transposes goes
// to XNNPACK's GEMM; on +psk1 every MatMul is proofswarm's kernel, whatever the
// transposes. Here the runtime's BatchMatMul kernel is swapped, in the measuring
// process only, for one that transposes such an operand first (the Transpose
// kernel) and then runs the runtime's MatMul without transposes: training steps
// of the zoo models (Fashion-MNIST, Adam) with the kernel as it is and swapped,
// in alternating blocks; and the isolated products, with how many elements'
// bits the route changes. Each runtime is measured in its own process (one
// process runs one runtime) pinned to CPU 0, so psk1's kernels use one thread.
//   npm run bench -- matmul-route [--runtimes old,psk1] [--no-write]
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import '../../node/polyfill.js'
import { machine, writeSection } from './report.js'
import { fromDist, tsScriptArgs } from './ts-script.js'

const RUNTIME_OF = { old: 'tfjs-wasm@4.22.0-simd', psk1: 'tfjs-wasm@4.22.0-simd+psk1' } as const
type Rt = keyof typeof RUNTIME_OF
interface Step { model: string, asIs: number, swapped: number, ratio: number, ratios: number[] }
interface Product { name: string, asIs: number, swapped: number, differ: number }
interface Result { runtime: string, threads: number, steps: Step[], isolated: Product[] }

const argv = process.argv.slice(2)
const arg = (name: string, dflt: string): string => { const i = argv.indexOf(name); return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : dflt }
// CPU time of this process, not wall time: the measuring process is single-threaded (pinned to one core), and on a
// machine shared with other jobs its wall time is mostly waiting for that core
const cpuMs = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** One runtime, in this process: the products alone, then training steps in alternating blocks. */
async function measure (rt: Rt): Promise<Result> {
  const { initBackend, tf } = await fromDist<typeof import('../../node/train/backend.js')>('node/train/backend.js')
  const { loadIdxDataset, datasetRef } = await fromDist<typeof import('../../node/train/dataset.js')>('node/train/dataset.js')
  const { newProgram } = await fromDist<typeof import('../../protocols/program/index.js')>('protocols/program/index.js')
  const { Trainer } = await fromDist<typeof import('../../node/train/trainer.js')>('node/train/trainer.js')
  type KernelConfig = NonNullable<ReturnType<typeof tf.getKernel>>
  type Info = { dataId: object, shape: number[], dtype: string }
  type KernelArgs = { inputs: Record<string, Info>, backend: { disposeData: (id: object) => void }, attrs: Record<string, unknown> }

  const info = await initBackend('wasm', RUNTIME_OF[rt])
  if (rt === 'psk1' && (info.kernels !== 'native' || info.threads !== 1)) {
    throw new Error(`psk1 ran ${String(info.kernels)} kernels on ${String(info.threads)} threads, not the native addon on one (npm run build:kernels)`)
  }
  const asIs = tf.getKernel('BatchMatMul', 'wasm')
  const transposeKernel = tf.getKernel('Transpose', 'wasm')
  if (asIs === undefined || transposeKernel === undefined) throw new Error('no wasm BatchMatMul or Transpose kernel')
  const call = (k: KernelConfig, a: KernelArgs): Info => k.kernelFunc(a as never) as unknown as Info
  const swapped: KernelConfig = {
    ...asIs,
    kernelFunc: (args => {
      const { inputs, backend, attrs } = args as unknown as KernelArgs
      if (attrs.transposeA !== true && attrs.transposeB !== true) return call(asIs, { inputs, backend, attrs })
      const tr = (t: Info): Info => {
        const r = t.shape.length; const perm = [...Array(r).keys()]; [perm[r - 2], perm[r - 1]] = [perm[r - 1], perm[r - 2]]
        return call(transposeKernel, { inputs: { x: t }, backend, attrs: { perm } })
      }
      const a = attrs.transposeA === true ? tr(inputs.a) : inputs.a
      const b = attrs.transposeB === true ? tr(inputs.b) : inputs.b
      const out = call(asIs, { inputs: { a, b }, backend, attrs: { ...attrs, transposeA: false, transposeB: false } })
      if (a !== inputs.a) backend.disposeData(a.dataId)
      if (b !== inputs.b) backend.disposeData(b.dataId)
      return out
    }) as KernelConfig['kernelFunc']
  }
  const use = (k: KernelConfig): void => { tf.unregisterKernel('BatchMatMul', 'wasm'); tf.registerKernel(k) }

  // isolated products of the mlp's first layer at batch 64
  const x = tf.randomUniform([64, 784]); const dy = tf.randomUniform([64, 128]); const w = tf.randomUniform([784, 128])
  const products: Array<[string, () => ReturnType<typeof tf.matMul>]> = [
    ['dW = xᵀ·dy [784×64]·[64×128]', () => tf.matMul(x, dy, true, false)],
    ['dx = dy·Wᵀ [64×128]·[128×784]', () => tf.matMul(dy, w, false, true)]
  ]
  const reps = rt === 'old' ? 20 : 200
  const isolated: Product[] = []
  for (const [name, f] of products) {
    const ms: Record<'asIs' | 'swapped', number[]> = { asIs: [], swapped: [] }
    for (let round = 0; round < 6; round++) {
      for (const way of round % 2 === 0 ? ['asIs', 'swapped'] as const : ['swapped', 'asIs'] as const) {
        use(way === 'asIs' ? asIs : swapped)
        tf.tidy(() => { f().dataSync() })
        const t0 = cpuMs(); for (let i = 0; i < reps; i++) tf.tidy(() => { f().dataSync() }); ms[way].push((cpuMs() - t0) / reps)
      }
    }
    use(asIs); const p = f(); const pv = p.dataSync(); use(swapped); const q = f(); const qv = q.dataSync(); use(asIs)
    let differ = 0; for (let i = 0; i < pv.length; i++) if (!Object.is(pv[i], qv[i])) differ++
    p.dispose(); q.dispose()
    isolated.push({ name, asIs: median(ms.asIs), swapped: median(ms.swapped), differ: differ / pv.length })
  }
  x.dispose(); dy.dispose(); w.dispose()

  // training steps, alternating blocks (psk1's steps are ~10-25x shorter: longer blocks)
  const ds = loadIdxDataset()
  const steps: Step[] = []
  for (const [model, block] of [['mlp', rt === 'old' ? 20 : 200], ['cnn', rt === 'old' ? 4 : 40]] as const) {
    const t = await Trainer.create(newProgram({ model, dataset: datasetRef(ds), steps: 100_000, batchSize: 64, optimizer: 'adam', checkpointEvery: 100, runtime: RUNTIME_OF[rt] }), ds)
    for (let i = 0; i < 5; i++) t.runStep()
    const ms: Record<'asIs' | 'swapped', number[]> = { asIs: [], swapped: [] }
    for (let pair = 0; pair < 6; pair++) {
      for (const way of pair % 2 === 0 ? ['asIs', 'swapped'] as const : ['swapped', 'asIs'] as const) {
        use(way === 'asIs' ? asIs : swapped)
        const t0 = cpuMs(); for (let i = 0; i < block; i++) t.runStep(); ms[way].push((cpuMs() - t0) / block)
      }
    }
    use(asIs)
    t.dispose()
    const ratios = ms.asIs.map((a, i) => a / ms.swapped[i])
    steps.push({ model, asIs: median(ms.asIs), swapped: median(ms.swapped), ratio: median(ratios), ratios })
  }
  return { runtime: info.runtime, threads: info.threads ?? 1, steps, isolated }
}

const child = arg('--child', '')
if (child !== '') {
  process.stdout.write(`RESULT ${JSON.stringify(await measure(child as Rt))}\n`)
} else {
  const runtimes = arg('--runtimes', 'old,psk1').split(',') as Rt[]
  if (!runtimes.every(r => r in RUNTIME_OF)) { console.error('usage: npm run bench -- matmul-route [--runtimes old,psk1] [--no-write]'); process.exit(2) }
  const load0 = loadavg()
  const results: Result[] = []
  const dir = mkdtempSync(join(tmpdir(), 'ps-matmul-route-'))
  try {
    for (const rt of runtimes) {
      const r = spawnSync('taskset', ['-c', '0', process.execPath, ...tsScriptArgs(fileURLToPath(import.meta.url), ['--child', rt])], { encoding: 'utf8', cwd: dir, maxBuffer: 1 << 24, timeout: 1_800_000 })
      const line = (r.stdout ?? '').split('\n').find(l => l.startsWith('RESULT '))
      if (r.status !== 0 || line === undefined) throw new Error(`${rt}: exit ${r.status ?? r.signal}\n${r.stderr ?? ''}${r.stdout ?? ''}`)
      const res = JSON.parse(line.slice('RESULT '.length)) as Result
      results.push(res)
      for (const s of res.steps) console.log(`${res.runtime} ${s.model} b64: ${s.asIs.toFixed(2)} CPU ms/step as is, ${s.swapped.toFixed(2)} transposed first: ${s.ratio.toFixed(2)}× (pairs ${s.ratios.map(x => x.toFixed(2)).join(', ')})`)
      for (const p of res.isolated) console.log(`${res.runtime} ${p.name}: ${p.asIs.toFixed(3)} ms as is, ${p.swapped.toFixed(3)} ms transposed first; ${(100 * p.differ).toFixed(0)}% of the elements differ`)
    }
  } finally { rmSync(dir, { recursive: true, force: true }) }
  if (!argv.includes('--no-write')) {
    const load = (l: number[]): string => l.map(v => v.toFixed(1)).join(' ')
    writeSection('Training: gradient MatMuls without transposes (a route, measured)', `
Run: \`npm run bench -- matmul-route\` (test/bench/matmul-route.bench.ts), ${new Date().toISOString().slice(0, 10)}, ${machine()}; load average ${load(load0)} before, ${load(loadavg())} after.
Each runtime's BatchMatMul kernel swapped, in the measuring process only, for one that transposes a transposed operand first (the Transpose kernel) and then runs the runtime's MatMul without transposes; one process per runtime pinned to CPU 0 (psk1's kernels on one thread), Fashion-MNIST, Adam, batch 64; 6 alternating blocks, medians of the process's CPU time (ratio: median of the per-pair ratios; above 1: transposing first is faster).
On tfjs-wasm@4.22.0-simd that is XNNPACK's GEMM instead of tfjs' own loop, with other bits (another summation order): a new runtime's semantics. On +psk1 every MatMul is already proofswarm's kernel, one sequential sum per element whatever the transposes, so the bits are the same and the route only adds the Transpose kernels (docs/training.md, "Accuracy and performance").

| runtime | training step | as now (CPU ms) | transposed first (CPU ms) | speed-up |
|---|---|---|---|---|
${results.flatMap(r => r.steps.map(s => `| ${r.runtime} | ${s.model} | ${s.asIs.toFixed(2)} | ${s.swapped.toFixed(2)} | **${s.ratio.toFixed(2)}×** (${s.ratios.map(x => x.toFixed(2)).join(', ')}) |`)).join('\n')}

| runtime | product alone | as now (CPU ms) | transposed first (CPU ms) | elements whose bits differ |
|---|---|---|---|---|
${results.flatMap(r => r.isolated.map(p => `| ${r.runtime} | ${p.name} | ${p.asIs.toFixed(3)} | ${p.swapped.toFixed(3)} | ${(100 * p.differ).toFixed(0)}% |`)).join('\n')}
`)
    console.log('written to docs/benchmarks.md')
  }
}
