// The defender's tapes, one at a time (docs/disputes.md "Concurrent disputes").
// The chain queues a defender's re-runs (TapeQueue): each dispute's commit is
// due its allowance after the disputes opened before it, so the node tapes
// them in that order, one engine process at a time. A step announced by a
// challenger before its dispute opens (`prepare`) is taped only when the lane
// is idle, one at a time, and gives way to any dispute's tape: announcements
// are free to send, so they must not pile up engine processes nor delay a
// dispute's tape.

export class TapeLane {
  private tail: Promise<unknown> = Promise.resolve()
  private queued = 0
  private announced?: { key: string, abort: AbortController }

  /** Nothing taping, queued or announced. */
  get idle (): boolean { return this.queued === 0 && this.announced === undefined }

  /** Reserves the idle lane for an announced step's tape: its abort signal, or undefined (busy: the announcement is not taped). */
  announce (key: string): AbortSignal | undefined {
    if (!this.idle) return undefined
    const abort = new AbortController()
    this.announced = { key, abort }
    return abort.signal
  }

  /** The announcement of `key` no longer holds the lane: its tape is now a dispute's (never aborted for another), or it failed. */
  release (key: string): void {
    if (this.announced?.key === key) this.announced = undefined
  }

  /** Runs `job` after every job queued before it. A job of another key first aborts the announced tape. */
  run<T> (key: string, job: () => Promise<T>): Promise<T> {
    if (this.announced !== undefined && this.announced.key !== key) {
      this.announced.abort.abort()
      this.announced = undefined
    }
    this.queued += 1
    const done = (): void => {
      this.queued -= 1
      if (this.announced?.key === key) this.announced = undefined
    }
    const out = this.tail.then(job)
    out.then(done, done)
    this.tail = out.catch(() => {})
    return out
  }
}
