import * as tf from '@tensorflow/tfjs'
import { conv2dBackpropFilterValues } from '../../protocols/reference/conv.js'

// tfjs-backend-wasm 4.22 has no Conv2DBackpropFilter kernel, so conv nets
// cannot train on it. This one runs in plain JS on the values read out of the
// wasm heap; its arithmetic is protocols/reference/conv.ts (float64
// accumulation in a fixed loop order), so the element reference is the kernel.

interface WasmLike { readSync: (id: unknown) => unknown, makeOutput: (shape: number[], dtype: string, offset?: number, values?: Float32Array) => tf.TensorInfo }

export function registerWasmExtraKernels (): void {
  if (tf.getKernel('Conv2DBackpropFilter', 'wasm') !== undefined) return
  tf.registerKernel({
    kernelName: 'Conv2DBackpropFilter',
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const { x, dy } = inputs as { x: tf.TensorInfo, dy: tf.TensorInfo }
      const a = attrs as unknown as { strides: [number, number] | number, pad: 'valid' | 'same' | number, dataFormat: 'NHWC' | 'NCHW', dimRoundingMode?: 'floor' | 'round' | 'ceil', filterShape: [number, number, number, number] }
      if (a.dataFormat !== undefined && a.dataFormat !== 'NHWC') throw new Error('wasm Conv2DBackpropFilter: only NHWC')
      const b = backend as unknown as WasmLike
      const xv = b.readSync(x.dataId) as Float32Array
      const dyv = b.readSync(dy.dataId) as Float32Array
      const out = conv2dBackpropFilterValues(x.shape, xv, dy.shape, dyv, a)
      return b.makeOutput(a.filterShape, 'float32', undefined, out)
    }
  })
}
