import type { LayerJson, SequentialJson } from './topology.js'

// The model zoo, written directly as tfjs Layers JSON (what
// `tf.sequential(...).toJSON(null, false)` produces, minus defaults) so
// protocols/ needs no tfjs. Initializer seeds are left null: the engine
// derives one per weight from the program seed.

const glorot = { class_name: 'GlorotUniform', config: { seed: null } }
const zeros = { class_name: 'Zeros', config: {} }

function dense (name: string, units: number, activation: string, extra: Record<string, unknown> = {}): LayerJson {
  return { class_name: 'Dense', config: { name, units, activation, use_bias: true, kernel_initializer: glorot, bias_initializer: zeros, dtype: 'float32', trainable: true, ...extra } }
}

/** 784-128-10 multilayer perceptron on flattened 28x28 images. */
export function mlpTopology (): SequentialJson {
  return {
    class_name: 'Sequential',
    config: {
      name: 'mlp',
      layers: [
        dense('dense1', 128, 'relu', { batch_input_shape: [null, 784] }),
        dense('logits', 10, 'linear')
      ]
    }
  }
}

/** Small conv net: conv3x3x8 - maxpool2 - conv3x3x16 - maxpool2 - dense 10. */
export function cnnTopology (): SequentialJson {
  const conv = (name: string, filters: number, extra: Record<string, unknown> = {}): LayerJson => ({
    class_name: 'Conv2D',
    config: { name, filters, kernel_size: [3, 3], strides: [1, 1], padding: 'valid', activation: 'relu', use_bias: true, kernel_initializer: glorot, bias_initializer: zeros, dtype: 'float32', trainable: true, ...extra }
  })
  const pool = (name: string): LayerJson => ({ class_name: 'MaxPooling2D', config: { name, pool_size: [2, 2], strides: [2, 2], padding: 'valid', trainable: true } })
  return {
    class_name: 'Sequential',
    config: {
      name: 'cnn',
      layers: [
        conv('conv1', 8, { batch_input_shape: [null, 28, 28, 1] }),
        pool('pool1'),
        conv('conv2', 16),
        pool('pool2'),
        { class_name: 'Flatten', config: { name: 'flatten', trainable: true } },
        dense('logits', 10, 'linear')
      ]
    }
  }
}

export const ZOO: Record<string, { topology: () => SequentialJson, inputShape: number[] }> = {
  mlp: { topology: mlpTopology, inputShape: [784] },
  cnn: { topology: cnnTopology, inputShape: [28, 28, 1] }
}
