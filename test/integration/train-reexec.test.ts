import { afterAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

// Ops recorded in one process re-execute bitwise in a fresh process, from the
// recorded input values alone (what a verifier or the chain's one-step check
// does). The child uses the compiled engine (npm test builds first).
const run = promisify(execFile)
const dir = mkdtempSync(join(tmpdir(), 'ps-reexec-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const DIST = join(process.cwd(), 'dist')
const RECORD = `
import '${DIST}/node/polyfill.js'
import { writeFileSync } from 'node:fs'
const { initBackend } = await import('${DIST}/node/train/backend.js')
const { syntheticDataset, datasetRef } = await import('${DIST}/node/train/dataset.js')
const { newProgram } = await import('${DIST}/protocols/program/index.js')
const { Trainer } = await import('${DIST}/node/train/trainer.js')
const { tapeStep } = await import('${DIST}/node/train/tape-recorder.js')
await initBackend('wasm')
const ds = syntheticDataset(9, 128, 8)
const t = await Trainer.create(newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 4, optimizer: 'adam', batchSize: 32 }), ds)
t.runStep()
const tr = tapeStep(t)
const enc = v => ({ shape: v.shape, dtype: v.dtype, b64: Buffer.from(v.values.buffer, v.values.byteOffset, v.values.byteLength).toString('base64') })
const ops = tr.entries.filter(e => e.kernel !== '@state').map(e => ({ entry: e, inputs: tr.values[e.index].inputs.map(enc), outputs: tr.values[e.index].outputs.map(enc) }))
writeFileSync(process.argv[2], JSON.stringify({ tapeRoot: tr.tapeRoot, ops }))
`
const REPLAY = `
import '${DIST}/node/polyfill.js'
import { readFileSync } from 'node:fs'
const { initBackend } = await import('${DIST}/node/train/backend.js')
const { reexecuteOp, sameBits } = await import('${DIST}/node/train/tape-recorder.js')
const { valuesFromBytes } = await import('${DIST}/protocols/commit/index.js')
await initBackend('wasm')
const dec = v => ({ shape: v.shape, dtype: v.dtype, values: valuesFromBytes(v.dtype, new Uint8Array(Buffer.from(v.b64, 'base64'))) })
const rec = JSON.parse(readFileSync(process.argv[2], 'utf8'))
let ok = 0; const bad = []
for (const op of rec.ops) {
  const outs = reexecuteOp(op.entry, op.inputs.map(dec))
  if (outs.every((o, j) => sameBits(o, dec(op.outputs[j])))) ok++; else bad.push(op.entry.index + ':' + op.entry.kernel)
}
process.stdout.write(JSON.stringify({ ok, bad }))
`

describe('op re-execution in a fresh process', () => {
  it('every kernel of a recorded Adam step reproduces bitwise in another process', async () => {
    writeFileSync(join(dir, 'record.mjs'), RECORD)
    writeFileSync(join(dir, 'replay.mjs'), REPLAY)
    const file = join(dir, 'ops.json')
    await run(process.execPath, [join(dir, 'record.mjs'), file], { timeout: 60_000 })
    const { stdout } = await run(process.execPath, [join(dir, 'replay.mjs'), file], { timeout: 60_000, maxBuffer: 1 << 20 })
    const r = JSON.parse(stdout)
    expect(r.bad).toEqual([])
    expect(r.ok).toBe(126)
  })
})
