import { fromHex } from '../../protocols/commit/merkle.js'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { datasetRootHex } from '../../protocols/dispute/dataset.js'
import { datasetRowsRoot, labelRows, type Dataset } from './dataset.js'

// A dataset's dataset_root (protocols/dispute/dataset.ts: its normalised input
// rows' and one-hot labels' trees): what a task commits and a verifier checks
// a dataset it fetched against. Building it costs ~1.5 s for Fashion-MNIST, so
// an engine process keeps it by content hash (the loader checked the files
// against it): a verifier checking task after task on one dataset pays once.

const MAX_ENTRIES = 4
const roots = new Map<string, string>()

/** dataset_root (hex, no 0x) of a loaded dataset. */
export function datasetRootOfRows (ds: Dataset): string {
  const key = `${ds.kind}:${ds.sha256}`
  const hit = roots.get(key)
  if (hit !== undefined) return hit
  const all = new Uint32Array(ds.trainSize).map((_, i) => i)
  const yRoot = commitTensor({ shape: [ds.trainSize, ds.classes], dtype: 'float32', values: labelRows(ds, all) }).root
  const root = datasetRootHex(fromHex(datasetRowsRoot(ds)), yRoot)
  roots.set(key, root)
  while (roots.size > MAX_ENTRIES) roots.delete(roots.keys().next().value as string)
  return root
}
