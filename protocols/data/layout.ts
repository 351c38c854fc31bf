// How a batch tensor lays out dataset rows: [batch, ...rest] where the rest
// holds exactly one dataset row (x: rowSize values, y: classes one-hot
// values) in row-major order, so batch element `flat` is element
// `flat % width` of the dataset row at batch position `floor(flat / width)`.
// The chain's data claim accepts exactly these layouts; a program whose
// inputs have another layout has no data claim and is not admissible.

/** True when `shape` is [batch, ...rest] with the rest holding `width` values. */
export function isBatchLayout (shape: readonly number[], batch: number, width: number): boolean {
  if (shape.length < 2 || shape[0] !== batch) return false
  let n = 1
  for (let i = 1; i < shape.length; i++) n *= shape[i]
  return n === width
}

/** Batch position and offset in the dataset row of batch element `flat`. */
export function batchElement (flat: number, width: number): { r: number, offset: number } {
  return { r: Math.floor(flat / width), offset: flat % width }
}
