import * as tf from '@tensorflow/tfjs'
import { deriveSeed } from '../../protocols/data/prng.js'
import { INIT_DOMAIN } from '../../protocols/data/order.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { SEEDED_INITIALIZERS, type SequentialJson } from '../../protocols/program/topology.js'

// Builds the program's model with seeded initialisers: weight number w (in
// model order: kernel then bias per layer) gets seed deriveSeed(seed, 'init', w).
// The seed replaces any seed in the JSON, so the program seed alone fixes init.

export function seededTopology (topology: SequentialJson, seed: number): SequentialJson {
  const t = JSON.parse(JSON.stringify(topology)) as SequentialJson
  let w = 0
  for (const l of t.config.layers) {
    const c = l.config
    if (l.class_name !== 'Dense' && l.class_name !== 'Conv2D') continue
    for (const key of ['kernel_initializer', 'bias_initializer']) {
      if (key === 'bias_initializer' && c.use_bias === false) continue
      const init = (c[key] ?? { class_name: key === 'kernel_initializer' ? 'GlorotUniform' : 'Zeros', config: {} }) as { class_name: string, config?: Record<string, unknown> }
      if (SEEDED_INITIALIZERS.has(init.class_name)) init.config = { ...(init.config ?? {}), seed: deriveSeed(seed, INIT_DOMAIN, w) }
      c[key] = init
      w++
    }
  }
  return t
}

export async function buildModel (program: TaskProgram): Promise<tf.LayersModel> {
  if (program.model.topology === undefined) throw new Error(`model ${program.model.name} is not a Layers model`)
  const topo = seededTopology(program.model.topology, program.seed)
  return await tf.models.modelFromJSON({ modelTopology: topo as unknown as tf.io.ModelJSON['modelTopology'] })
}
