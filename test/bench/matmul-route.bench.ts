// A route to faster training, measured (not in the runtime): the gradients of
// a dense or conv layer are BatchMatMuls with a transposed operand
// (dW = xᵀ·dy, dx = dy·Wᵀ), which tfjs-backend-wasm 4.22 computes in its own
// blocked loop, while a MatMul without transposes goes to XNNPACK's GEMM. Here
// the wasm BatchMatMul kernel is swapped, in this process only, for one that
// transposes such an operand first (the Transpose kernel) and then runs the
// plain MatMul: training steps of the zoo models (Fashion-MNIST, Adam) with the
// kernel as it is and swapped, in alternating blocks; and the isolated
// products. The bits differ (another summation order), so this is a new
// runtime's semantics, not an optimisation of the pinned one.
//   npm run bench -- matmul-route [--no-write]
import { loadavg } from 'node:os'
import '../../node/polyfill.js'
import { machine, writeSection } from './report.js'
import { fromDist } from './ts-script.js'

const { initBackend, tf } = await fromDist<typeof import('../../node/train/backend.js')>('node/train/backend.js')
const { loadIdxDataset, datasetRef } = await fromDist<typeof import('../../node/train/dataset.js')>('node/train/dataset.js')
const { newProgram } = await fromDist<typeof import('../../protocols/program/index.js')>('protocols/program/index.js')
const { Trainer } = await fromDist<typeof import('../../node/train/trainer.js')>('node/train/trainer.js')

type KernelConfig = NonNullable<ReturnType<typeof tf.getKernel>>
type Info = { dataId: object, shape: number[], dtype: string }
type KernelArgs = { inputs: Record<string, Info>, backend: { disposeData: (id: object) => void }, attrs: Record<string, unknown> }

await initBackend('wasm')
const load0 = loadavg()[0]
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
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

// isolated products of the mlp's first layer at batch 64
const x = tf.randomUniform([64, 784]); const dy = tf.randomUniform([64, 128]); const w = tf.randomUniform([784, 128])
const products: Array<[string, () => ReturnType<typeof tf.matMul>]> = [
  ['dW = xᵀ·dy [784×64]·[64×128]', () => tf.matMul(x, dy, true, false)],
  ['dx = dy·Wᵀ [64×128]·[128×784]', () => tf.matMul(dy, w, false, true)]
]
const isolated: Array<{ name: string, asIs: number, swapped: number, differ: number }> = []
for (const [name, f] of products) {
  const ms: Record<'asIs' | 'swapped', number[]> = { asIs: [], swapped: [] }
  for (let round = 0; round < 6; round++) {
    for (const way of round % 2 === 0 ? ['asIs', 'swapped'] as const : ['swapped', 'asIs'] as const) {
      use(way === 'asIs' ? asIs : swapped)
      tf.tidy(() => { f().dataSync() })
      const t0 = performance.now(); for (let i = 0; i < 20; i++) tf.tidy(() => { f().dataSync() }); ms[way].push((performance.now() - t0) / 20)
    }
  }
  use(asIs); const p = f(); const pv = p.dataSync(); use(swapped); const q = f(); const qv = q.dataSync(); use(asIs)
  let differ = 0; for (let i = 0; i < pv.length; i++) if (pv[i] !== qv[i]) differ++
  p.dispose(); q.dispose()
  isolated.push({ name, asIs: median(ms.asIs), swapped: median(ms.swapped), differ: differ / pv.length })
}
x.dispose(); dy.dispose(); w.dispose()

// training steps, alternating blocks
const ds = loadIdxDataset()
const steps: Array<{ model: string, asIs: number, swapped: number, ratio: number, ratios: number[] }> = []
for (const [model, block] of [['mlp', 20], ['cnn', 4]] as const) {
  const t = await Trainer.create(newProgram({ model, dataset: datasetRef(ds), steps: 100_000, batchSize: 64, optimizer: 'adam', checkpointEvery: 100 }), ds)
  for (let i = 0; i < 5; i++) t.runStep()
  const ms: Record<'asIs' | 'swapped', number[]> = { asIs: [], swapped: [] }
  for (let pair = 0; pair < 6; pair++) {
    for (const way of pair % 2 === 0 ? ['asIs', 'swapped'] as const : ['swapped', 'asIs'] as const) {
      use(way === 'asIs' ? asIs : swapped)
      const t0 = performance.now(); for (let i = 0; i < block; i++) t.runStep(); ms[way].push((performance.now() - t0) / block)
    }
  }
  use(asIs)
  t.dispose()
  const ratios = ms.asIs.map((a, i) => a / ms.swapped[i])
  steps.push({ model, asIs: median(ms.asIs), swapped: median(ms.swapped), ratio: median(ratios), ratios })
  console.log(`${model} b64: ${median(ms.asIs).toFixed(2)} ms/step as is, ${median(ms.swapped).toFixed(2)} swapped: ${median(ratios).toFixed(2)}× (pairs ${ratios.map(r => r.toFixed(2)).join(', ')})`)
}
for (const r of isolated) console.log(`${r.name}: ${r.asIs.toFixed(3)} ms as is, ${r.swapped.toFixed(3)} ms transposed first; ${(100 * r.differ).toFixed(0)}% of the elements differ`)

if (!process.argv.includes('--no-write')) {
  writeSection('Training: gradient MatMuls without transposes (a route, measured)', `
Run: \`npm run bench -- matmul-route\` (test/bench/matmul-route.bench.ts), ${new Date().toISOString().slice(0, 10)}, ${machine()}; load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after.
The wasm BatchMatMul kernel swapped, in the bench's process only, for one that transposes a transposed operand first (Transpose kernel) and then runs the MatMul without transposes (XNNPACK's GEMM); one thread, Fashion-MNIST, Adam, batch 64; 6 alternating blocks, medians (ratio: median of the per-pair ratios). Not in the runtime: the results' bits differ (another summation order), so it would be a new runtime's semantics (docs/training.md, "What remains").

| training step | as now (ms) | transposed first (ms) | speed-up |
|---|---|---|---|
${steps.map(s => `| ${s.model} | ${s.asIs.toFixed(2)} | ${s.swapped.toFixed(2)} | **${s.ratio.toFixed(2)}×** (${s.ratios.map(r => r.toFixed(2)).join(', ')}) |`).join('\n')}

| product alone | as now (ms) | transposed first (ms) | elements whose bits differ |
|---|---|---|---|
${isolated.map(r => `| ${r.name} | ${r.asIs.toFixed(3)} | ${r.swapped.toFixed(3)} | ${(100 * r.differ).toFixed(0)}% |`).join('\n')}
`)
  console.log('written to docs/benchmarks.md')
}
