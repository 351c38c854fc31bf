// Plain values the runtime logic works with (protocols/scale: the same
// conventions as the node's chain client, so both sides of the wire agree).
export { toPlain, variant, type Plain } from '../../../protocols/scale/plain.js'
