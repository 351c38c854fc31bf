import type { ChainClient, ChainEvent, DisputeInfo, NodeInfo, TaskInfo } from '../../node/chain/client.js'
import { decodeMsg, decodeSignedBytes, narrowStepOf, type NarrowStep } from '../../protocols/dispute/index.js'
import { BalanceHistory, type BalanceSample } from './balance-history.js'

// Watches the chain for the dashboard: tasks, disputes, balances and stakes
// of the dev accounts (now and over time), the moves of open disputes that
// reached the chain, and a bounded log of Arbitration events. The chain
// client (and polkadot.js) is loaded only when a chain URL is given; if the
// chain is down the view says so and keeps retrying.

export interface AccountRef { name: string, suri: string }

export interface AccountView {
  name: string
  address: string
  accountId: string
  free?: bigint
  reserved?: bigint
  node?: (Omit<NodeInfo, 'peerId'> & { peerId: string }) | null
}

export interface ChainView {
  url?: string
  state: 'none' | 'connecting' | 'connected' | 'down'
  error?: string
  bestBlock?: number
  /** rootEvery: the task's state-root spacing m (TaskRootEvery, 1 when absent): at m > 1 verdicts and disputes name segments */
  tasks: Array<TaskInfo & { id: string, rootEvery: number }>
  disputes: Array<DisputeInfo & { id: string }>
  accounts: AccountView[]
  events: Array<{ section: string, method: string, data: Record<string, unknown>, blockNumber: number }>
  /** balances and stakes of the accounts, one sample per best block read (left out of the periodic states: new samples go out one by one) */
  history?: BalanceSample[]
  /** dispute id → the narrowing its moves on chain (forced or answered) show, read while it is open */
  chainMoves: Record<string, NarrowStep[]>
}

/** Most recent tasks/disputes read per poll; the page shows the latest ones. */
const MAX_ITEMS = 32
const MAX_EVENTS = 300
/** a dispute has at most a few hundred messages; more would be a broken chain */
const MAX_MOVES = 512

export class ChainWatch {
  readonly view: ChainView
  private client?: ChainClient
  private connecting?: Promise<ChainClient>
  private unsubscribe?: () => void
  private accounts?: AccountView[]
  private readonly history = new BalanceHistory()
  /** hears each new balance sample */
  onSample?: (s: BalanceSample) => void

  constructor (readonly url: string | undefined, private readonly accountRefs?: AccountRef[]) {
    this.view = { url, state: url == null ? 'none' : 'connecting', tasks: [], disputes: [], accounts: [], events: [], history: this.history.samples, chainMoves: {} }
  }

  private async connect (): Promise<ChainClient> {
    // probe first: a polkadot.js provider that fails to connect keeps retrying in the background
    await probeWebSocket(this.url!)
    const { ChainClient } = await import('../../node/chain/client.js')
    // the signer is never used: the dashboard only reads
    const c = await ChainClient.connect({ url: this.url!, signer: '//Alice', timeoutMs: 5000 })
    try {
      this.accounts = await resolveAccounts(this.accountRefs)
      this.unsubscribe = await c.onEvents(e => this.onEvent(e))
    } catch (err) {
      await c.disconnect().catch(() => {})
      throw err
    }
    return c
  }

  private onEvent (e: ChainEvent): void {
    if (e.section !== 'arbitration') return
    this.view.events.push({ section: e.section, method: e.method, data: e.data, blockNumber: e.blockNumber })
    if (this.view.events.length > MAX_EVENTS) this.view.events.splice(0, this.view.events.length - MAX_EVENTS)
  }

  /** One poll; never throws. */
  async poll (): Promise<void> {
    if (this.url == null) return
    try {
      if (this.client == null) {
        this.connecting ??= this.connect().finally(() => { this.connecting = undefined })
        this.client = await this.connecting
      }
      const c = this.client
      /* eslint-disable @typescript-eslint/no-explicit-any -- the dev chain's pallets have no generated polkadot.js types; toPlain() turns each codec into plain JSON */
      const q = c.api.query as any
      const { toPlain } = await import('../../node/chain/plain.js')
      const [best, nextTask, nextDispute] = await withTimeout(Promise.all([
        c.bestNumber(),
        q.arbitration.nextTaskId().then((v: any) => BigInt(v.toString())),
        q.arbitration.nextDisputeId().then((v: any) => BigInt(v.toString()))
      ]))
      const ids = (next: bigint): bigint[] => {
        const out: bigint[] = []; for (let i = next - 1n; i >= 0n && out.length < MAX_ITEMS; i--) out.push(i); return out
      }
      const taskIds = ids(nextTask)
      const disputeIds = ids(nextDispute)
      const accts = this.accounts ?? []
      const [tasks, rootEvery, disputes, balances, nodes] = await withTimeout(Promise.all([
        taskIds.length > 0 ? q.arbitration.tasks.multi(taskIds) : [],
        taskIds.length > 0 ? q.arbitration.taskRootEvery.multi(taskIds) : [],
        disputeIds.length > 0 ? q.arbitration.disputes.multi(disputeIds) : [],
        accts.length > 0 ? q.system.account.multi(accts.map(a => a.accountId)) : [],
        accts.length > 0 ? q.arbitration.nodes.multi(accts.map(a => a.accountId)) : []
      ]))
      this.view.bestBlock = best
      this.view.tasks = (tasks as any[])
        .map((t, i) => ({ id: String(taskIds[i]), rootEvery: Number(toPlain((rootEvery as any[])[i]) ?? 1), ...(toPlain(t) as any) }))
        .filter(t => t.phase != null)
      this.view.disputes = (disputes as any[]).map((d, i) => ({ id: String(disputeIds[i]), ...(toPlain(d) as any) })).filter(d => d.status != null)
      this.view.accounts = accts.map((a, i) => {
        const bal = toPlain((balances as any[])[i]) as any
        const node = toPlain((nodes as any[])[i]) as any
        return { ...a, free: bal?.data?.free, reserved: bal?.data?.reserved, node: node == null ? null : { ...node, peerId: utf8OfHex(node.peerId) } }
      /* eslint-enable @typescript-eslint/no-explicit-any */
      })
      if (this.history.add(best, Date.now(), this.view.accounts)) this.onSample?.(this.history.samples[this.history.samples.length - 1])
      await this.readMoves(q)
      this.view.state = 'connected'
      this.view.error = undefined
    } catch (err) {
      this.view.state = 'down'
      this.view.error = (err as Error).message
      // drop the connection: the next poll reconnects (a restarted chain)
      const c = this.client
      this.client = undefined
      this.unsubscribe?.()
      this.unsubscribe = undefined
      await c?.disconnect().catch(() => {})
    }
  }

  /**
   * The last move on chain of each open dispute: a move forced on chain, or
   * the answer to one. The dashboard shows the bisection narrowing from them
   * while the dispute is played, before its challenger reports the whole game.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- polkadot.js query without generated types
  private async readMoves (q: any): Promise<void> {
    const open = this.view.disputes.filter(d => d.status === 'Open').map(d => d.id)
    if (open.length === 0) return
    const moves = await withTimeout(
      q.arbitration.disputeLastMove.multi(open.map(BigInt)) as Promise<Array<{ isSome: boolean, unwrap: () => { toU8a: (bare: boolean) => Uint8Array } }>>
    )
    moves.forEach((v, i) => {
      if (!v.isSome) return
      let step: NarrowStep | undefined
      // the chain checked the signature; a message it holds and we cannot read is left out of the picture
      try { step = narrowStepOf(decodeMsg(decodeSignedBytes(v.unwrap().toU8a(true)).m)) } catch { return }
      if (step === undefined) return
      const list = this.view.chainMoves[open[i]] ??= []
      if (list.some(x => x.seq === step.seq) || list.length >= MAX_MOVES) return
      list.push(step)
      list.sort((a, b) => a.seq - b.seq)
    })
    const keep = new Set(this.view.disputes.map(d => d.id))
    for (const id of Object.keys(this.view.chainMoves)) if (!keep.has(id)) Reflect.deleteProperty(this.view.chainMoves, id)
  }

  async stop (): Promise<void> {
    this.unsubscribe?.()
    const c = this.client ?? await this.connecting?.catch(() => undefined)
    this.client = undefined
    await c?.disconnect().catch(() => {})
  }
}

async function probeWebSocket (url: string, ms = 2000): Promise<void> {
  const { WebSocket } = await import('ws')
  await new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(url)
    const t = setTimeout(() => { ws.terminate(); reject(new Error(`no chain at ${url} (no answer within ${ms} ms)`)) }, ms)
    ws.once('open', () => { clearTimeout(t); ws.close(); resolve() })
    ws.once('error', err => { clearTimeout(t); ws.terminate(); reject(new Error(`no chain at ${url} (${err.message})`)) })
  })
}

async function resolveAccounts (refs?: AccountRef[]): Promise<AccountView[]> {
  const { Keyring } = await import('@polkadot/keyring')
  const { u8aToHex } = await import('@polkadot/util')
  let list = refs
  if (list == null) {
    const { DEV_ACCOUNTS } = await import('../chain/dev-spec.js')
    list = DEV_ACCOUNTS.map(n => ({ name: n, suri: `//${n}` }))
  }
  const keyring = new Keyring({ type: 'sr25519' })
  return list.map(r => {
    const pair = keyring.addFromUri(r.suri)
    return { name: r.name, address: pair.address, accountId: u8aToHex(pair.publicKey) }
  })
}

function utf8OfHex (hex: unknown): string {
  if (typeof hex !== 'string' || !hex.startsWith('0x')) return String(hex)
  try { return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(hex.slice(2), 'hex')) } catch { return hex }
}

async function withTimeout<T> (p: Promise<T>, ms = 5000): Promise<T> {
  let t: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => { t = setTimeout(() => reject(new Error(`chain did not answer within ${ms} ms`)), ms) })
  try { return await Promise.race([p, timeout]) } finally { clearTimeout(t) }
}
