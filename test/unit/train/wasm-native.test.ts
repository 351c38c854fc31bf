import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { openAddon, type Addon } from '../../../node/train/psk-addon.js'
import { trainTask } from '../../../node/train/run.js'
import { tapeStep } from '../../../node/train/tape-recorder.js'
import { Trainer } from '../../../node/train/trainer.js'
import { registerWasmNativeKernels, wasmGradCases, wasmGradMismatch, wasmGradOriginals, WASM_NATIVE_KERNELS, type WasmGradCase } from '../../../node/train/wasm-native.js'
import { newProgram, WASM_RUNTIME } from '../../../protocols/program/index.js'

// The canonical runtime's Conv2DBackpropFilter, Conv2DBackpropInput and MaxPoolGrad run natively with that
// runtime's bits: every existing proof, tape and dispute of a tfjs-wasm@4.22.0-simd task must stay as it was.
// Native against the kernels they replace (the JavaScript filter gradient, the pinned binary's other two) on
// random geometries, bit for bit; and the proof root and tape of CNN tasks pinned to what main's build (the
// originals) computed.
const PINNED = {
  16: {
    proofRoot: '49f99bfd1285a493fc428c8cc88a65bc3afeadce15411e39a336b2e7bc6a2c22',
    tapeRoot: 'f41acd9fed4b06e00ac214e34d450e08a0a4da0e708827074ee057699b2e0c93',
    skeletonRoot: '2f7f16f680878a94fbbf37bbfdda819d3ab05f624cb159807558362a1f09222d'
  },
  8: {
    proofRoot: 'f300c7f05a547dee019aff07baef0ec3847dde1c3264de140df54e2b3004eb46',
    tapeRoot: 'cc15f033fb20d82487e4874994bb320ebc0bb6ac9245ff9c0d6d71825dab9b44',
    skeletonRoot: 'f984667293013bd9d957a6f6c1e3f462ea1a3a8bcf2eb01572026460c6a749f1'
  }
} as const

let ds: Dataset
let dir: string
beforeAll(async () => {
  const b = await initBackend('auto', WASM_RUNTIME)
  expect(b.runtime).toBe(WASM_RUNTIME)
  expect(b.gradKernels).toBe('native')
  ds = syntheticDataset(4, 256, 16)
  dir = mkdtempSync(join(tmpdir(), 'ps-wasm-native-'))
})
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

/** seeded values: ±4, with specials (±0, subnormals, ±Inf) and NaNs of one payload or several */
function values (rand: () => number, n: number, specials: boolean, nans: number[]): Float32Array {
  const v = new Float32Array(n); const u = new Uint32Array(v.buffer)
  const sp = [0x00000000, 0x80000000, 0x00000001, 0x80000003, 0x7f800000, 0xff800000, 0x7f7fffff]
  for (let i = 0; i < n; i++) {
    const p = rand()
    if (nans.length > 0 && p < 0.02) u[i] = nans[Math.floor(rand() * nans.length)]
    else if (specials && p < 0.08) u[i] = sp[Math.floor(rand() * sp.length)]
    else v[i] = (rand() - 0.5) * 8
  }
  return v
}

function randomCases (seed: number, count: number): WasmGradCase[] {
  let s = seed >>> 0
  const rand = (): number => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32 }
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))
  const cases: WasmGradCase[] = []
  while (cases.length < count) {
    const B = int(1, 3); const H = int(2, 17); const W = int(2, 17); const CI = int(1, 10); const CO = int(1, 20)
    const kh = int(1, 4); const kw = int(1, 4); const strides: [number, number] = [int(1, 2), int(1, 2)]
    const pad = rand() < 0.5 ? 'valid' as const : 'same' as const
    if (pad === 'valid' && (kh > H || kw > W)) continue
    const p = tf.backend_util.computeConv2DInfo([B, H, W, CI], [kh, kw, CI, CO], strides, 1, pad)
    const kind = int(0, 3) // finite, specials, one NaN payload, several NaN payloads
    const specials = kind === 1; const nans = kind === 2 ? [0x7fc00000] : kind === 3 ? [0x7fc00000, 0xffc01234, 0x7f800001] : []
    const x = values(rand, B * H * W * CI, specials, nans)
    const dy = values(rand, B * p.outHeight * p.outWidth * CO, specials, nans)
    const w = values(rand, kh * kw * CI * CO, specials, nans)
    cases.push({ name: 'Conv2DBackpropFilter', inputs: { x: [[B, H, W, CI], x], dy: [[B, p.outHeight, p.outWidth, CO], dy] }, attrs: { strides, pad, filterShape: [kh, kw, CI, CO], dataFormat: 'NHWC' } })
    // the binary's own loop keeps either of two different NaNs that meet (not fixed: protocols/reference/dot.ts)
    if (kind !== 3 && !(specials && nans.length > 0)) cases.push({ name: 'Conv2DBackpropInput', inputs: { dy: [[B, p.outHeight, p.outWidth, CO], dy], filter: [[kh, kw, CI, CO], w] }, attrs: { strides, pad, inputShape: [B, H, W, CI], dataFormat: 'NHWC' } })
    const pk: [number, number] = [int(1, 3), int(1, 3)]
    const pool = tf.backend_util.computePool2DInfo([B, H, W, CI], pk, strides, 1, pad === 'valid' && (pk[0] > H || pk[1] > W) ? 'same' : pad)
    const px = values(rand, B * H * W * CI, specials || kind === 3, nans)
    // mostly negative or zero windows too: the argmax's FLT_MIN start sends their gradient to element 0
    if (rand() < 0.3) for (let i = 0; i < px.length; i++) if (!Number.isNaN(px[i])) px[i] = -Math.abs(px[i])
    const pdy = values(rand, B * pool.outHeight * pool.outWidth * CI, specials, nans)
    cases.push({ name: 'MaxPoolGrad', inputs: { dy: [[B, pool.outHeight, pool.outWidth, CI], pdy], input: [[B, H, W, CI], px] }, attrs: { filterSize: pk, strides, pad: pool.padInfo.type === 'VALID' ? 'valid' : 'same' } })
  }
  return cases
}

describe('canonical runtime: native conv gradients give the kernels\' own bits', () => {
  it('on random geometries (strides 1 and 2 per axis, valid and same padding, 1-4 taps) and special values, every element', () => {
    const orig = wasmGradOriginals()
    expect(orig).toBeDefined()
    const cases = randomCases(0x19c0de, 150)
    const counts = Object.fromEntries(WASM_NATIVE_KERNELS.map(k => [k, 0]))
    const wrong: string[] = []
    for (const c of cases) {
      const native = tf.getKernel(c.name, 'wasm')?.kernelFunc
      expect(native).not.toBe(orig?.[c.name])
      const m = wasmGradMismatch(c, native as tf.KernelFunc, orig?.[c.name] as tf.KernelFunc)
      if (m !== undefined) wrong.push(`${JSON.stringify(c.attrs)} ${JSON.stringify(Object.values(c.inputs).map(i => i[0]))}: ${m}`)
      counts[c.name]++
    }
    expect(wrong).toEqual([])
    for (const k of WASM_NATIVE_KERNELS) expect(counts[k]).toBeGreaterThan(30)
  })

  it('the self-test\'s cases once more (the zoo CNN\'s layers among them)', () => {
    const orig = wasmGradOriginals()
    for (const c of wasmGradCases()) expect(wasmGradMismatch(c, tf.getKernel(c.name, 'wasm')?.kernelFunc as tf.KernelFunc, orig?.[c.name] as tf.KernelFunc)).toBeUndefined()
  })

  for (const batchSize of [16, 8] as const) {
    it(`cnn batch ${batchSize}: the proof root of a 6-step task and the tape of step 3 are main's`, async () => {
      const program = newProgram({ model: 'cnn', runtime: WASM_RUNTIME, dataset: datasetRef(ds), steps: 6, checkpointEvery: 3, batchSize, seed: 5 })
      const r = await trainTask({ program, outDir: join(dir, `cnn-${batchSize}`), dataset: ds, hashWorker: false, evaluate: false })
      expect(r.proofRoot).toBe(PINNED[batchSize].proofRoot)
      const t = await Trainer.create(program, ds)
      try {
        t.runStep(); t.runStep()
        const tape = tapeStep(t)
        expect(tape.skeletonRoot).toBe(PINNED[batchSize].skeletonRoot)
        expect(tape.tapeRoot).toBe(PINNED[batchSize].tapeRoot)
      } finally {
        t.dispose()
      }
    })
  }

  it('a native kernel that drifts by one rounding is refused by the self-test, and the originals stay registered', () => {
    const addon = openAddon()
    if ('error' in addon) throw new Error(addon.error)
    // float32 sums (psk1's filter gradient) instead of the runtime's float64 ones: the same order, other roundings
    // (the addon's own properties are read-only: the drifted one shadows it)
    const wrong: Addon['wasmConv2dBackpropFilter'] = (x, dy, dw, g) => addon.conv2dBackpropFilter(x, dy, dw, g)
    const drifted = Object.create(addon, { wasmConv2dBackpropFilter: { value: wrong } }) as Addon
    try {
      const r = registerWasmNativeKernels(drifted)
      expect(r.kind).toBe('wasm')
      expect(r.why).toMatch(/Conv2DBackpropFilter: element \d+/)
      for (const k of WASM_NATIVE_KERNELS) expect(tf.getKernel(k, 'wasm')?.kernelFunc).toBe(wasmGradOriginals()?.[k])
    } finally {
      const again = registerWasmNativeKernels(addon)
      expect(again.why).toBe('self-test passed')
    }
  })
})
