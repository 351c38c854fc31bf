import { describe, expect, it } from 'vitest'
import { WASM_PSK_RUNTIME, WASM_RUNTIME } from '../../../protocols/program/index.js'
import { activeBackend, initBackend, resetBackend, tf } from '../../../node/train/backend.js'
import { PSK_KERNEL_NAMES } from '../../../node/train/psk-kernels.js'

// resetBackend gives a process that ran one runtime the next as a new process has it
// (the in-process test files share forks: test/inproc-setup.ts).

describe('resetBackend', () => {
  it('after psk1: the wasm backend\'s own kernels are back, no variables, no backend; the plain wasm runtime starts', async () => {
    resetBackend()
    const own = new Map(tf.getKernelsForBackend('wasm').map(k => [k.kernelName, k]))
    expect((await initBackend('wasm', WASM_PSK_RUNTIME)).runtime).toBe(WASM_PSK_RUNTIME)
    const swapped = PSK_KERNEL_NAMES.filter(n => tf.getKernel(n, 'wasm') !== own.get(n))
    expect(swapped.length).toBeGreaterThan(0)
    tf.variable(tf.zeros([2]), true, 'backend-reset-test')
    // asking for the other wasm runtime in the same process is refused, as in a node
    await expect(initBackend('wasm', WASM_RUNTIME)).rejects.toThrow(/cannot switch/)
    resetBackend()
    expect(activeBackend()).toBeUndefined()
    expect(tf.getKernelsForBackend('wasm').filter(k => own.get(k.kernelName) !== k).map(k => k.kernelName)).toEqual([])
    expect([...own.keys()].filter(n => tf.getKernel(n, 'wasm') === undefined)).toEqual([])
    // the variable's name is free again
    tf.variable(tf.zeros([2]), true, 'backend-reset-test').dispose()
    // the plain runtime with the native same-bits kernels off: exactly the wasm backend's own kernels, none of psk1's
    const native = process.env.PROOFSWARM_PSK_NATIVE
    process.env.PROOFSWARM_PSK_NATIVE = '0'
    try {
      expect((await initBackend('wasm', WASM_RUNTIME)).runtime).toBe(WASM_RUNTIME)
    } finally {
      if (native === undefined) delete process.env.PROOFSWARM_PSK_NATIVE
      else process.env.PROOFSWARM_PSK_NATIVE = native
    }
    for (const n of PSK_KERNEL_NAMES) if (own.has(n)) expect(tf.getKernel(n, 'wasm')).toBe(own.get(n))
  })
})
