import type { DatasetRef } from '../../protocols/program/program.js'
import { loadDatasetFor, type Dataset } from './dataset.js'

// Datasets by content. A warm engine process (node/engine/engine-server.ts)
// verifies task after task on the same dataset; reading, decompressing and
// hashing Fashion-MNIST costs ~0.2 s of CPU each time. A dataset is reused
// only for a task naming the same content hash it was checked against, so a
// file changed on disk in between cannot slip in (a miss reloads and re-checks).

const MAX_ENTRIES = 2
const cache = new Map<string, Dataset>()

export function cachedDatasetFor (ref: DatasetRef, dir?: string, opts: { checkRowsRoot?: boolean } = {}): Dataset {
  const key = JSON.stringify([
    ref.kind, ref.name, ref.sha256, ref.syntheticSeed ?? null, ref.trainSize, ref.testSize, ref.rowsRoot ?? null,
    ref.text ?? null, dir ?? null, opts.checkRowsRoot === true
  ])
  const hit = cache.get(key)
  if (hit !== undefined) {
    // most recently used last
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  const ds = loadDatasetFor(ref, dir, opts)
  cache.set(key, ds)
  while (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value as string)
  return ds
}

export function datasetCacheSize (): number {
  return cache.size
}
