// The NaN watch's cost (node/train/nan-watch.ts): a verifiable run scans every
// op output for a NaN (docs/disputes.md, "NaN: a NaN ends the run"). Training
// steps with and without the watch installed, interleaved in blocks (ABBA) in
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
const { NanWatch } = await fromDist<typeof import('../../node/train/nan-watch.js')>('node/train/nan-watch.js')

await initBackend('wasm')
const ds = loadIdxDataset()
const BLOCK = 10; const PAIRS = 8
const load0 = loadavg()[0]
const rows = []
for (const [model, batch] of [['mlp', 64], ['cnn', 32]] as const) {
  const t = await Trainer.create(newProgram({ model, dataset: datasetRef(ds), steps: 10_000, batchSize: batch, optimizer: 'adam', checkpointEvery: 100 }), ds)
  for (let i = 0; i < 5; i++) t.runStep()
  const block = (watched: boolean): number => {
    const w = watched ? new NanWatch() : undefined
    const t0 = performance.now()
    for (let i = 0; i < BLOCK; i++) { if (w) w.seen = false; t.runStep() }
    const ms = (performance.now() - t0) / BLOCK
    w?.dispose()
    return ms
  }
  const ratios = []; let plainSum = 0; let watchSum = 0
  for (let p = 0; p < PAIRS; p++) {
    // ABBA: plain, watched, watched, plain
    const a1 = block(false); const b1 = block(true); const b2 = block(true); const a2 = block(false)
    ratios.push((b1 + b2) / (a1 + a2)); plainSum += a1 + a2; watchSum += b1 + b2
  }
  t.dispose()
  ratios.sort((x, y) => x - y)
  const median = (ratios[PAIRS / 2 - 1] + ratios[PAIRS / 2]) / 2
  rows.push({ model, batch, plain: plainSum / (2 * PAIRS), watched: watchSum / (2 * PAIRS), median })
  console.log(`${model} batch ${batch}: ${(plainSum / (2 * PAIRS)).toFixed(2)} ms/step plain, ${(watchSum / (2 * PAIRS)).toFixed(2)} watched, median ratio ${median.toFixed(3)}`)
}
const body = `Run: \`npm run bench -- nan-watch\` (test/bench/nan-watch.bench.ts), ${new Date().toISOString().slice(0, 10)}, ${machine()}; load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after (the machine is shared).
Training steps (Fashion-MNIST, Adam) with and without the NaN watch of verifiable runs (every op
output of a kernel that can make a NaN scanned in place on the wasm heap with \`Float32Array#includes(NaN)\`), ${PAIRS} ABBA pairs of ${BLOCK}-step blocks in one process.

| model | batch | ms/step without | ms/step with the watch | median ratio (with / without) |
|---|---|---|---|---|
${rows.map(r => `| ${r.model} | ${r.batch} | ${r.plain.toFixed(2)} | ${r.watched.toFixed(2)} | ${r.median.toFixed(3)} |`).join('\n')}
`
writeSection('NaN watch', body)
