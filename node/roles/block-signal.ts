import type { ChainClient } from '../chain/client.js'

// An abort signal that fires once the chain's best block reaches `block`: a
// verifier's downloads end there, whatever their provider does. A provider
// that sends a block just inside each request's timeout keeps a fetch alive
// for as long as it likes; ended in time, the checkpoint is "not obtainable"
// and the verifier backs its reject with an availability challenge before its
// deadline, instead of waiting past it (a lapsed slot is penalised).

export interface BlockSignal {
  signal: AbortSignal
  /** stops watching the chain (the signal then never fires) */
  stop: () => void
}

/** Blocks a verifier keeps for its reject and availability challenge after its downloads. */
export const FETCH_RESERVE_BLOCKS = 5

export function blockSignal (chain: Pick<ChainClient, 'bestNumber'>, block: number, pollMs = 1000): BlockSignal {
  const ctl = new AbortController()
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  const stop = (): void => { stopped = true; clearTimeout(timer) }
  const look = async (): Promise<void> => {
    const best = await chain.bestNumber().catch(() => undefined)
    if (stopped) return
    if (best !== undefined && best >= block) {
      stopped = true
      ctl.abort(new Error(`not obtained before block ${block}, the last this peer waits for it`))
      return
    }
    timer = setTimeout(() => { void look() }, pollMs)
    timer.unref()
  }
  void look()
  return { signal: ctl.signal, stop }
}
