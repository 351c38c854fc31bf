// The NaN watch's cost (node/train/nan-watch.ts): a verifiable run scans every
// op output for a NaN (docs/disputes.md, "NaN: a NaN ends the run"). Training
// steps without the watch and with it (scanning with includes(NaN) or the
// addon's SIMD loop), interleaved in blocks (ABCCBA) in
// one process on Fashion-MNIST; the figure is the median of the per-pair
// ratios, since the machine is shared. Writes the "NaN watch" section of
// docs/benchmarks.md. Run: npm run bench -- nan-watch
import { loadavg } from 'node:os'
import '../../node/polyfill.js'
import { machine, writeSection } from './report.js'
import { fromDist } from './ts-script.js'
const { initBackend } = await fromDist<typeof import('../../node/train/backend.js')>('node/train/backend.js')
const { loadIdxDataset, datasetRef } = await fromDist<typeof import('../../node/train/dataset.js')>('node/train/dataset.js')
const { newProgram } = await fromDist<typeof import('../../protocols/program/index.js')>('protocols/program/index.js')
const { Trainer } = await fromDist<typeof import('../../node/train/trainer.js')>('node/train/trainer.js')
const { NanWatch, includesNaN } = await fromDist<typeof import('../../node/train/nan-watch.js')>('node/train/nan-watch.js')
const { nativeNaNScan } = await fromDist<typeof import('../../node/train/psk-native.js')>('node/train/psk-native.js')
const native = nativeNaNScan()
if (native === undefined) throw new Error('the psk addon is not built (npm run build:kernels): the native NaN scan cannot be measured')

await initBackend('wasm')
const ds = loadIdxDataset()
const BLOCK = 10; const PAIRS = 8
const load0 = loadavg()[0]
const rows = []
for (const [model, batch] of [['mlp', 64], ['cnn', 32]] as const) {
  const t = await Trainer.create(newProgram({ model, dataset: datasetRef(ds), steps: 10_000, batchSize: batch, optimizer: 'adam', checkpointEvery: 100 }), ds)
  for (let i = 0; i < 5; i++) t.runStep()
  type Scan = ((v: Float32Array) => boolean) | undefined
  const block = (scan: Scan): number => {
    const w = scan !== undefined ? new NanWatch(scan) : undefined
    const t0 = performance.now()
    for (let i = 0; i < BLOCK; i++) { if (w) w.seen = false; t.runStep() }
    const ms = (performance.now() - t0) / BLOCK
    w?.dispose()
    return ms
  }
  const jsRatios: number[] = []; const nativeRatios: number[] = []
  let plainSum = 0; let jsSum = 0; let nativeSum = 0
  for (let p = 0; p < PAIRS; p++) {
    // ABCCBA: plain, includes(NaN), native, native, includes(NaN), plain
    const a1 = block(undefined); const b1 = block(includesNaN); const c1 = block(native)
    const c2 = block(native); const b2 = block(includesNaN); const a2 = block(undefined)
    jsRatios.push((b1 + b2) / (a1 + a2)); nativeRatios.push((c1 + c2) / (a1 + a2))
    plainSum += a1 + a2; jsSum += b1 + b2; nativeSum += c1 + c2
  }
  t.dispose()
  const median = (r: number[]): number => { const x = [...r].sort((a, b) => a - b); return (x[PAIRS / 2 - 1] + x[PAIRS / 2]) / 2 }
  const n = 2 * PAIRS
  rows.push({ model, batch, plain: plainSum / n, js: jsSum / n, native: nativeSum / n, jsRatio: median(jsRatios), nativeRatio: median(nativeRatios) })
  console.log(`${model} batch ${batch}: ${(plainSum / n).toFixed(2)} ms/step plain, ${(jsSum / n).toFixed(2)} watched (includes), ` +
    `${(nativeSum / n).toFixed(2)} watched (native), median ratios ${median(jsRatios).toFixed(3)} / ${median(nativeRatios).toFixed(3)}`)
}
const body = `Run: \`npm run bench -- nan-watch\` (test/bench/nan-watch.bench.ts), ${new Date().toISOString().slice(0, 10)}, ${machine()}; load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after (the machine is shared).
Training steps (Fashion-MNIST, Adam, runtime tfjs-wasm@4.22.0-simd) without the NaN watch of verifiable runs and with it (every op
output of a kernel that can make a NaN scanned in place on the wasm heap), the scan by \`Float32Array#includes(NaN)\` or by the
psk addon's SIMD loop (the default when the addon is built), ${PAIRS} ABCCBA sextets of ${BLOCK}-step blocks in one process; ratios are medians over the sextets.

| model | batch | ms/step without | with the watch: includes(NaN) | with the watch: native scan | ratio includes / without | ratio native / without |
|---|---|---|---|---|---|---|
${rows.map(r => `| ${r.model} | ${r.batch} | ${r.plain.toFixed(2)} | ${r.js.toFixed(2)} | ${r.native.toFixed(2)} | ${r.jsRatio.toFixed(3)} | ${r.nativeRatio.toFixed(3)} |`).join('\n')}
`
writeSection('NaN watch', body)
