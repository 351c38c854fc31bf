import { ApiPromise, WsProvider } from '@polkadot/api'
import type { SubmittableExtrinsic } from '@polkadot/api/types'
import { Keyring } from '@polkadot/keyring'
import type { KeyringPair } from '@polkadot/keyring/types'
import type { Codec, ISubmittableResult } from '@polkadot/types/types'
import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { toPlain, type Plain } from './plain.js'
import type { AvailabilityChallenge, ChunkRequest, DisputeInfo, DisputeKind, NodeInfo, Params, SubmitTaskArgs, TaskAssignments, TaskInfo, VerifierAssignment } from '../../protocols/pallet-types.js'
import { peerBindingPayload } from '../../protocols/identity/peer-binding.js'
import type { Logger } from '../log.js'
import { keepConnected, type Reconnector } from './reconnect.js'

const CONNECT_TIMEOUT_MS = 15_000

async function withTimeout<T> (p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined
  try {
    return await Promise.race([p, new Promise<never>((_resolve, reject) => { t = setTimeout(() => reject(new Error(what)), ms) })])
  } finally { clearTimeout(t) }
}

// the pallet's storage types, as this client returns them (defined once, with the runtime)
export type * from '../../protocols/pallet-types.js'
export { ROLE_SUBMITTER, ROLE_SOLVER, ROLE_VERIFIER, ROLE_WHISTLEBLOWER } from '../../protocols/roles.js'

// The node's typed chain client. It speaks only to the Arbitration pallet
// interface through an unmodified ApiPromise, so it works the same against
// the dev chain and a Substrate chain running the same pallet.

export interface ChainEvent {
  section: string
  method: string
  /** named fields as plain values (bigint for u64/u128, 0x-hex for hashes/accounts) */
  data: Record<string, Plain>
  blockHash: string
  blockNumber: number
}

export interface TxOutcome { blockHash: string, events: ChainEvent[] }

/** A dispatch error; `error` is "arbitration.NotRegistered" style for module errors. */
export class ChainError extends Error {
  constructor (readonly error: string, readonly docs: string, readonly outcome?: TxOutcome) {
    super(`${error}${docs !== '' ? `: ${docs}` : ''}`)
    this.name = 'ChainError'
  }
}

export interface ChainClientOptions {
  url: string
  /** where connection losses and reconnect attempts are logged */
  log?: Logger
  /** secret URI (e.g. //Alice, a mnemonic) or a KeyringPair */
  signer: string | KeyringPair
  /** wait for finality instead of inclusion (default false) */
  finalized?: boolean
  timeoutMs?: number
}

function eventOf (
  e: { event: { section: string, method: string, data: Codec[] & { names?: string[] | null } } }, blockHash: string, blockNumber: number
): ChainEvent {
  const names = e.event.data.names ?? []
  const data: Record<string, Plain> = {}
  e.event.data.forEach((v, i) => { data[names[i] ?? String(i)] = toPlain(v) })
  return { section: e.event.section, method: e.event.method, data, blockHash, blockNumber }
}

export class ChainClient {
  readonly address: string
  readonly accountId: string
  private queue: Promise<unknown> = Promise.resolve()

  private constructor (readonly api: ApiPromise, readonly pair: KeyringPair, readonly opts: ChainClientOptions) {
    this.address = pair.address
    this.accountId = u8aToHex(pair.publicKey)
  }

  static async connect (opts: ChainClientOptions): Promise<ChainClient> {
    await cryptoWaitReady()
    const pair = typeof opts.signer === 'string' ? new Keyring({ type: 'sr25519' }).addFromUri(opts.signer) : opts.signer
    // auto-connect off: a failed first connection throws (the caller retries
    // with a backoff) and a lost one is re-dialled by keepConnected, which logs each attempt
    const provider = new WsProvider(opts.url, false)
    const connecting = provider.connect()
    const api = await withTimeout(ApiPromise.create({ provider, noInitWarn: true, throwOnConnect: true }), CONNECT_TIMEOUT_MS, `no answer from the chain at ${opts.url} within ${CONNECT_TIMEOUT_MS / 1000} s`)
      .catch(async (err: unknown) => { await provider.disconnect().catch(() => {}); throw err })
    await connecting.catch(() => {})
    const client = new ChainClient(api, pair, opts)
    client.reconnector = keepConnected(provider, opts.url, opts.log)
    return client
  }

  private reconnector?: Reconnector

  async disconnect (): Promise<void> {
    this.reconnector?.stop()
    await this.api.disconnect()
  }

  // ---- queries ----
  async bestNumber (): Promise<number> { return (await this.api.rpc.chain.getHeader()).number.toNumber() }
  async finalizedNumber (): Promise<number> {
    return (await this.api.rpc.chain.getHeader(await this.api.rpc.chain.getFinalizedHead())).number.toNumber()
  }

  async blockHash (n: number): Promise<string> { return (await this.api.rpc.chain.getBlockHash(n)).toHex() }

  async balance (who = this.accountId): Promise<{ free: bigint, reserved: bigint }> {
    const a = toPlain(await this.api.query.system.account(who)) as { data: { free: bigint, reserved: bigint } }
    return { free: a.data.free, reserved: a.data.reserved }
  }

  async params (): Promise<Params> { return toPlain(await this.api.query.arbitration.params()) as unknown as Params }
  async node (who = this.accountId): Promise<NodeInfo | null> { return toPlain(await this.api.query.arbitration.nodes(who)) as unknown as NodeInfo | null }
  async task (id: bigint | number): Promise<TaskInfo | null> { return toPlain(await this.api.query.arbitration.tasks(id)) as unknown as TaskInfo | null }
  /** The verifiers the chain drew for a task, every round (null before the first draw). */
  async assignments (taskId: bigint | number): Promise<TaskAssignments | null> {
    return toPlain(await this.api.query.arbitration.assignments(taskId)) as unknown as TaskAssignments | null
  }

  /** This account's live assignment on a task, if the chain drew it and it is not over. */
  async myAssignment (taskId: bigint | number, who = this.accountId): Promise<VerifierAssignment | null> {
    return (await this.assignments(taskId))?.verifiers.find(v => v.verifier === who && v.status === 'Active') ?? null
  }

  async dispute (id: bigint | number): Promise<DisputeInfo | null> {
    return toPlain(await this.api.query.arbitration.disputes(id)) as unknown as DisputeInfo | null
  }

  /** Id the next submitted task will get: every task id below it exists. */
  async nextTaskId (): Promise<bigint> { return BigInt(toPlain(await this.api.query.arbitration.nextTaskId()) as bigint) }
  async openTasks (): Promise<bigint[]> { return toPlain(await this.api.query.arbitration.openTasks()) as bigint[] }
  /** Owner account (hex) of a libp2p peer id, or null. */
  async peerOwner (peerId: string): Promise<string | null> {
    return toPlain(await this.api.query.arbitration.peerOwner(u8aToHex(new TextEncoder().encode(peerId)))) as string | null
  }

  /** Events of one block. */
  async eventsAt (blockHash: string): Promise<ChainEvent[]> {
    const at = await this.api.at(blockHash)
    const n = (await this.api.rpc.chain.getHeader(blockHash)).number.toNumber()
    const records = await at.query.system.events()
    return (records as unknown as Array<Parameters<typeof eventOf>[0]>).map(r => eventOf(r, blockHash, n))
  }

  /** Calls back with every event of every new (or finalized) block; returns an unsubscribe function. */
  async onEvents (cb: (e: ChainEvent) => void, opts: { finalized?: boolean } = {}): Promise<() => void> {
    let chain = Promise.resolve()
    const handle = (header: { hash: { toHex: () => string } }): void => {
      const h = header.hash.toHex()
      chain = chain.then(async () => { for (const e of await this.eventsAt(h)) cb(e) }).catch(() => {})
    }
    const un = opts.finalized === true
      ? await this.api.rpc.chain.subscribeFinalizedHeads(handle)
      : await this.api.rpc.chain.subscribeNewHeads(handle)
    return un
  }

  // ---- transactions ----

  /**
   * Signs and submits with an app-managed nonce (submissions from this client
   * are serialized until the pool accepted them), then waits for inclusion
   * (or finality) and throws ChainError on a dispatch error.
   */
  async send (tx: SubmittableExtrinsic<'promise'>): Promise<TxOutcome> {
    const finalized = this.opts.finalized === true
    let settle!: { resolve: (o: TxOutcome) => void, reject: (e: Error) => void }
    const done = new Promise<TxOutcome>((resolve, reject) => { settle = { resolve, reject } })
    const submitted = this.queue.then(async () => {
      const nonce = await this.api.rpc.system.accountNextIndex(this.address)
      const timer = setTimeout(() => settle.reject(new Error('transaction not included in time')), this.opts.timeoutMs ?? 60_000)
      // the callback can fire before signAndSend resolves: unsubscribe lazily
      let unsubFn: (() => void) | undefined
      let finished = false
      const unsub = (): void => { finished = true; unsubFn?.() }
      unsubFn = await tx.signAndSend(this.pair, { nonce }, (r: ISubmittableResult) => {
        if (finished) return
        // polkadot.js drops an InBlock status when Finalized follows quickly (switchMap): accept either
        const target = finalized ? r.status.isFinalized : (r.status.isInBlock || r.status.isFinalized)
        if (r.isError || r.status.isDropped || r.status.isInvalid || r.status.isUsurped) {
          clearTimeout(timer); unsub(); settle.reject(new Error(`transaction ${r.status.type}`)); return
        }
        if (!target) return
        clearTimeout(timer)
        unsub()
        const blockHash = (r.status.isFinalized ? r.status.asFinalized : r.status.asInBlock).toHex()
        let outcome: TxOutcome
        try {
          outcome = { blockHash, events: r.events.map(e => eventOf(e as never, blockHash, -1)) }
        } catch (e) { settle.reject(e as Error); return }
        if (r.dispatchError !== undefined) {
          if (r.dispatchError.isModule) {
            const m = this.api.registry.findMetaError(r.dispatchError.asModule)
            settle.reject(new ChainError(`${m.section}.${m.name}`, m.docs.join(' '), outcome))
          } else settle.reject(new ChainError(r.dispatchError.type, '', outcome))
        } else settle.resolve(outcome)
      })
      if (finished) unsubFn()
    })
    this.queue = submitted.catch(() => {})
    await submitted.catch((e: Error) => settle.reject(e))
    return await done
  }

  private field (o: TxOutcome, method: string, name: string): Plain {
    const e = o.events.find(x => x.section === 'arbitration' && x.method === method)
    if (e === undefined) throw new Error(`expected event arbitration.${method}`)
    return e.data[name]
  }

  async transfer (to: string, amount: bigint): Promise<TxOutcome> { return await this.send(this.api.tx.balances.transferKeepAlive(to, amount)) }

  /**
   * Registers this account for `peerId`; `signPeer` is the peer's libp2p identity key signing
   * the binding (protocols/identity/peer-binding.ts), which the chain checks against the id.
   */
  async registerNode (peerId: string, roles: number, stake: bigint, signPeer: (payload: Uint8Array) => Uint8Array | Promise<Uint8Array>): Promise<TxOutcome> {
    const sig = await signPeer(peerBindingPayload(this.api.genesisHash.toU8a(), this.pair.publicKey))
    return await this.send(this.api.tx.arbitration.registerNode(u8aToHex(new TextEncoder().encode(peerId)), roles, stake, u8aToHex(sig)))
  }

  async addStake (amount: bigint): Promise<TxOutcome> { return await this.send(this.api.tx.arbitration.addStake(amount)) }
  async setRoles (roles: number): Promise<TxOutcome> { return await this.send(this.api.tx.arbitration.setRoles(roles)) }
  async unregister (): Promise<TxOutcome> { return await this.send(this.api.tx.arbitration.unregister()) }

  /** `program`: the canonical program bytes (protocols/program programBytes) that programHash is the sha256 of. */
  async submitTask (p: SubmitTaskArgs & { program: Uint8Array }): Promise<bigint> {
    const o = await this.send(this.api.tx.arbitration.submitTask(p.programHash, u8aToHex(p.program), p.datasetRoot, p.skeletonRoot, p.steps, p.checkpointEvery,
      p.escrow, p.solverReward, p.verifierReward, p.verifierCount, p.challengeWindow, p.solveTimeout))
    return this.field(o, 'TaskSubmitted', 'taskId') as bigint
  }

  async releaseTask (taskId: bigint | number): Promise<TxOutcome> { return await this.send(this.api.tx.arbitration.releaseTask(taskId)) }

  async commitProof (
    taskId: bigint | number, p: { proofRoot: string, finalStateRoot: string, stepCount: number, checkpoints: string[] }
  ): Promise<{ randomnessBlock: number, challengeEnd: number }> {
    const cps = p.checkpoints.map(c => u8aToHex(new TextEncoder().encode(c)))
    const o = await this.send(this.api.tx.arbitration.commitProof(taskId, p.proofRoot, p.finalStateRoot, p.stepCount, cps))
    return { randomnessBlock: this.field(o, 'ProofCommitted', 'randomnessBlock') as number, challengeEnd: this.field(o, 'ProofCommitted', 'challengeEnd') as number }
  }

  /** A diverged proof: states 0..stepCount, the run's first NaN at entry `entry`, element `flat` of step stepCount's tape (commit_diverged). */
  async commitDiverged (
    taskId: bigint | number, p: { proofRoot: string, finalStateRoot: string, stepCount: number, checkpoints: string[], entry: number, flat: number }
  ): Promise<{ randomnessBlock: number, challengeEnd: number }> {
    const cps = p.checkpoints.map(c => u8aToHex(new TextEncoder().encode(c)))
    const o = await this.send(this.api.tx.arbitration.commitDiverged(taskId, p.proofRoot, p.finalStateRoot, p.stepCount, cps, p.entry, p.flat))
    return { randomnessBlock: this.field(o, 'ProofCommitted', 'randomnessBlock') as number, challengeEnd: this.field(o, 'ProofCommitted', 'challengeEnd') as number }
  }

  async submitVerdict (taskId: bigint | number, accept: boolean, checkedSteps: number[]): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.submitVerdict(taskId, accept, checkedSteps))
  }

  async openDispute (taskId: bigint | number, defender: string, kind: DisputeKind, disputedStep: number): Promise<bigint> {
    const o = await this.send(this.api.tx.arbitration.openDispute(taskId, defender, kind, disputedStep))
    return this.field(o, 'DisputeOpened', 'disputeId') as bigint
  }

  /** The genesis hash every dispute message is signed over (with the task and dispute ids). */
  get genesisHash (): string { return this.api.genesisHash.toHex() }

  /** The last dispute message on chain (protocols/dispute encodeSigned bytes), or null. */
  async disputeLastMove (id: bigint | number): Promise<Uint8Array | null> {
    const v = await this.api.query.arbitration.disputeLastMove(id) as unknown as { isSome: boolean, unwrap: () => { toU8a: (bare: boolean) => Uint8Array } }
    return v.isSome ? v.unwrap().toU8a(true) : null
  }

  /**
   * Forces a move: posts the counterparty's last signed message (`theirs`,
   * empty when it is the one on chain) and our next one (`mine`; both empty:
   * the challenger demands the commit). Resolves with the due block.
   */
  async forceMove (disputeId: bigint | number, theirs: Uint8Array, mine: Uint8Array): Promise<{ seq: number, due: number }> {
    const o = await this.send(this.api.tx.arbitration.forceMove(disputeId, u8aToHex(theirs), u8aToHex(mine)))
    return { seq: this.field(o, 'MoveForced', 'seq') as number, due: this.field(o, 'MoveForced', 'due') as number }
  }

  /** Answers a force against us with message `answer` (encodeSigned bytes). */
  async answerMove (disputeId: bigint | number, answer: Uint8Array): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.answerMove(disputeId, u8aToHex(answer)))
  }

  async claimTimeout (disputeId: bigint | number): Promise<TxOutcome> { return await this.send(this.api.tx.arbitration.claimTimeout(disputeId)) }

  /** Submits the claim that ends a bisection (protocols/dispute encodeClaim bytes); resolves with the winner account (hex). */
  async adjudicate (disputeId: bigint | number, claim: Uint8Array): Promise<{ winner: string, loser: string, forcedError: boolean, outcome: TxOutcome }> {
    const o = await this.send(this.api.tx.arbitration.adjudicate(disputeId, u8aToHex(claim)))
    return { winner: this.field(o, 'DisputeResolved', 'winner') as string, loser: this.field(o, 'DisputeResolved', 'loser') as string, forcedError: this.field(o, 'DisputeResolved', 'forcedError') as boolean, outcome: o }
  }

  // ---- data-availability challenges (docs/disputes.md, "Withheld checkpoints") ----
  async availabilityChallenge (id: bigint | number): Promise<AvailabilityChallenge | null> {
    return toPlain(await this.api.query.arbitration.availabilityChallenges(id)) as unknown as AvailabilityChallenge | null
  }

  /** (checkpoint step, challenge id) of every open availability challenge of a task. */
  async openAvailability (taskId: bigint | number): Promise<Array<[number, number]>> {
    return (toPlain(await this.api.query.arbitration.openAvailability(taskId)) as Array<[number, bigint | number]>).map(([s, id]) => [Number(s), Number(id)])
  }

  /** Challenges the solver of `taskId` to post sampled rows of its checkpoint at `checkpointStep`; resolves with the challenge id. */
  async challengeAvailability (taskId: bigint | number, checkpointStep: number): Promise<bigint> {
    const o = await this.send(this.api.tx.arbitration.challengeAvailability(taskId, checkpointStep))
    return this.field(o, 'AvailabilityChallenged', 'challengeId') as bigint
  }

  /** The solver's answer: protocols/availability encodeAvailabilityResponse bytes (≤ 64 KiB). */
  async respondAvailability (challengeId: bigint | number, response: Uint8Array): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.respondAvailability(challengeId, u8aToHex(response)))
  }

  async availabilityTimeout (challengeId: bigint | number): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.availabilityTimeout(challengeId))
  }

  // ---- chunk sampling of erasure-coded checkpoints (docs/protocol.md §5, "Chunk sampling") ----
  async chunkRequest (id: bigint | number): Promise<ChunkRequest | null> {
    return toPlain(await this.api.query.arbitration.chunkRequests(id)) as unknown as ChunkRequest | null
  }

  /** (checkpoint step, request id) of every open chunk-sample request of a task. */
  async openChunkRequests (taskId: bigint | number): Promise<Array<[number, number]>> {
    return (toPlain(await this.api.query.arbitration.openChunkRequests(taskId)) as Array<[number, bigint | number]>).map(([s, id]) => [Number(s), Number(id)])
  }

  /** Asks the chain for samples of the coded chunks of checkpoint `checkpointStep` (a deposit is reserved); resolves with the request id. */
  async sampleChunks (taskId: bigint | number, checkpointStep: number): Promise<bigint> {
    const o = await this.send(this.api.tx.arbitration.sampleChunks(taskId, checkpointStep))
    return this.field(o, 'ChunksRequested', 'requestId') as bigint
  }

  /** One part of the solver's answer: protocols/erasure buildChunkResponses bytes (≤ 1 MiB). */
  async respondChunks (requestId: bigint | number, part: Uint8Array): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.respondChunks(requestId, u8aToHex(part)))
  }

  async chunksTimeout (requestId: bigint | number): Promise<TxOutcome> { return await this.send(this.api.tx.arbitration.chunksTimeout(requestId)) }

  /** Claims that state root 0 of the task's proof is not the program's initialisation (protocols/dispute/init-claim.ts encodeInitClaim bytes); resolves with the ruling. */
  async challengeInitialState (taskId: bigint | number, claim: Uint8Array): Promise<{
    solverWrong: boolean
    slashed: bigint
    reason: string
    outcome: TxOutcome
  }> {
    const o = await this.send(this.api.tx.arbitration.challengeInitialState(taskId, u8aToHex(claim)))
    const reason = this.field(o, 'InitialStateRuled', 'reason') as string
    return { solverWrong: this.field(o, 'InitialStateRuled', 'solverWrong') as boolean, slashed: BigInt(this.field(o, 'InitialStateRuled', 'slashed') as bigint), reason: Buffer.from(reason.replace(/^0x/, ''), 'hex').toString('utf8'), outcome: o }
  }

  /** The solver proves that a step ruled against it was its Truebit forced error (VRF pre-output 32 bytes, proof 64 bytes) and changed exactly one element (protocols/dispute/forced-exact.ts encodeExactness). */
  async revealForcedError (
    taskId: bigint | number, vrfOutput: Uint8Array, vrfProof: Uint8Array, exactness: Uint8Array
  ): Promise<{ step: number, outcome: TxOutcome }> {
    const o = await this.send(this.api.tx.arbitration.revealForcedError(taskId, u8aToHex(vrfOutput), u8aToHex(vrfProof), u8aToHex(exactness)))
    return { step: this.field(o, 'ForcedErrorRevealed', 'step') as number, outcome: o }
  }

  /** The randomness of block n (the block author's VRF, Randomness.ByBlock), or null if block n is not produced yet. */
  async randomness (blockNumber: number): Promise<string | null> {
    const r = await this.api.query.randomness.byBlock(blockNumber) as unknown as { isSome: boolean, unwrap: () => { toHex: () => string } }
    return r.isSome ? r.unwrap().toHex() : null
  }
}
