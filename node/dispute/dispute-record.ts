import type { NarrowStep } from '../../protocols/dispute/index.js'

// What a node keeps of a dispute it plays, ongoing or finished (the control
// API's records and the dashboard read it).

export interface DisputeRecord {
  disputeId: number
  role: 'challenger' | 'defender'
  ms: number
  moves: number
  winner: string
  reason: string
  taskId?: number
  step?: number
  narrowing?: NarrowStep[]
  open?: boolean
}
