import * as tf from '@tensorflow/tfjs'

// What the training loop needs from a model: its trainable variables in state
// order and the loss of a batch. A Layers model (the zoo's MLP and CNN) and
// the GPT (gpt.ts) both provide it.

export interface StateVar { name: string, variable: tf.Variable }

export interface Net {
  readonly weights: StateVar[]
  /** mean softmax cross-entropy of the batch (x, y are the batch tensors) */
  loss: (x: tf.Tensor, y: tf.Tensor) => tf.Scalar
  dispose: () => void
}

export class LayersNet implements Net {
  readonly weights: StateVar[]
  constructor (readonly model: tf.LayersModel) {
    this.weights = model.trainableWeights.map(w => ({ name: w.originalName, variable: (w as unknown as { read: () => tf.Variable }).read() }))
  }

  loss (x: tf.Tensor, y: tf.Tensor): tf.Scalar {
    return tf.losses.softmaxCrossEntropy(y, this.model.apply(x, { training: true }) as tf.Tensor) as tf.Scalar
  }

  dispose (): void { this.model.dispose() }
}
