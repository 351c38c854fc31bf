// When the dev chain authors blocks: on a timer, or in instant-seal mode right
// after each submission plus one empty block a little later that finalizes it.

export interface SealOptions {
  /** block interval in ms; ignored with instantSeal */
  blockTime?: number
  instantSeal?: boolean
  finalizeDelay?: number
}

export class SealSchedule {
  private timer: NodeJS.Timeout | undefined
  private sealScheduled = false
  private finalizeTimer: NodeJS.Timeout | undefined
  private closed = false

  constructor (private readonly opts: SealOptions, private readonly produce: () => void, private readonly poolSize: () => number) {}

  start (): void {
    if (this.opts.instantSeal !== true) {
      this.timer = setInterval(() => { this.produce() }, this.opts.blockTime ?? 1000)
    } else if (this.poolSize() > 0) this.soon()
  }

  /** Instant seal: a block in the next turn of the event loop, one for all submissions of this one. */
  soon (): void {
    if (this.sealScheduled || this.closed) return
    this.sealScheduled = true
    setImmediate(() => {
      this.sealScheduled = false
      if (this.poolSize() > 0) this.produce()
    })
  }

  afterSubmit (): void {
    if (this.opts.instantSeal === true) this.soon()
  }

  afterBlock (included: number): void {
    if (this.opts.instantSeal !== true) return
    // finalize this block by sealing an empty one a little later (never in the same tick as inBlock)
    if (this.finalizeTimer !== undefined) clearTimeout(this.finalizeTimer)
    if (included > 0) {
      this.finalizeTimer = setTimeout(() => { this.finalizeTimer = undefined; if (this.poolSize() === 0) this.produce() }, this.opts.finalizeDelay ?? 300)
    }
    if (this.poolSize() > 0 && included > 0) this.soon()
  }

  close (): void {
    this.closed = true
    if (this.timer !== undefined) clearInterval(this.timer)
    if (this.finalizeTimer !== undefined) clearTimeout(this.finalizeTimer)
  }
}
