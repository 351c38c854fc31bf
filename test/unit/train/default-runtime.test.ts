import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { chooseRuntime, defaultRuntime, newTaskProgram } from '../../../node/train/default-runtime.js'
import { pskAddonMissing } from '../../../node/train/psk-available.js'
import { nativeDir } from '../../../node/train/psk-addon.js'
import { syntheticDataset, datasetRef } from '../../../node/train/dataset.js'
import { newProgram } from '../../../protocols/program/program.js'
import { CPU_RUNTIME, WASM_PSK_RUNTIME, WASM_RUNTIME } from '../../../protocols/program/runtime.js'

// task new's runtime rule: psk1 where its native addon works on this machine,
// else the old runtime with a warning that says why; a named runtime wins.

const built = existsSync(join(nativeDir(), 'build', 'Release', 'psk_kernels.node'))
const ds = datasetRef(syntheticDataset(1, 64, 16), { rowsRoot: false })

afterEach(() => { vi.unstubAllEnvs() })

describe('the default runtime of a new task program', () => {
  it.runIf(built)('is psk1 where the addon loads', () => {
    expect(defaultRuntime()).toEqual({ runtime: WASM_PSK_RUNTIME, native: true })
    expect(pskAddonMissing(WASM_PSK_RUNTIME)).toBeUndefined()
    const { program, warning } = newTaskProgram({ model: 'mlp', dataset: ds, steps: 4 })
    expect(program.runtime).toBe(WASM_PSK_RUNTIME)
    expect(warning).toBeUndefined()
  })

  it('falls back to the old runtime, saying why, when the addon did not build', () => {
    const missing = join(nativeDir(), 'build', 'Release', 'no-such-addon.node')
    vi.stubEnv('PROOFSWARM_PSK_ADDON', missing)
    const c = defaultRuntime()
    expect(c.runtime).toBe(WASM_RUNTIME)
    expect(c.native).toBe(false)
    expect(c.warning).toMatch(/native addon is not usable here \(addon not built because .*no-such-addon\.node does not exist/)
    expect(c.warning).toMatch(/npm run build:kernels/)
    expect(pskAddonMissing(WASM_PSK_RUNTIME)).toMatch(/no-such-addon\.node does not exist/)
    expect(pskAddonMissing(WASM_RUNTIME)).toBeUndefined()
    const { program, warning } = newTaskProgram({ model: 'mlp', dataset: ds, steps: 4 })
    expect(program.runtime).toBe(WASM_RUNTIME)
    expect(warning).toBe(c.warning)
  })

  it('falls back when the JavaScript kernels are forced (PROOFSWARM_PSK_NATIVE=0)', () => {
    vi.stubEnv('PROOFSWARM_PSK_NATIVE', '0')
    expect(defaultRuntime().runtime).toBe(WASM_RUNTIME)
    expect(defaultRuntime().warning).toMatch(/PROOFSWARM_PSK_NATIVE=0/)
  })

  it('a named runtime wins; psk1 named without the addon is kept, with a warning', () => {
    expect(chooseRuntime(WASM_RUNTIME)).toEqual({ runtime: WASM_RUNTIME, native: false })
    expect(chooseRuntime(CPU_RUNTIME)).toEqual({ runtime: CPU_RUNTIME, native: false })
    vi.stubEnv('PROOFSWARM_PSK_NATIVE', '0')
    const c = chooseRuntime(WASM_PSK_RUNTIME)
    expect(c.runtime).toBe(WASM_PSK_RUNTIME)
    expect(c.warning).toMatch(/no usable psk1 addon \(PROOFSWARM_PSK_NATIVE=0\).*JavaScript kernels/)
    expect(newTaskProgram({ model: 'mlp', dataset: ds, steps: 4, runtime: WASM_RUNTIME }).program.runtime).toBe(WASM_RUNTIME)
  })

  it('the pure newProgram keeps the old runtime as its default (it cannot see the machine)', () => {
    expect(newProgram({ model: 'mlp', dataset: ds, steps: 4 }).runtime).toBe(WASM_RUNTIME)
  })
})
