import type { ApiPromise } from '@polkadot/api'
import type { SubmittableExtrinsic } from '@polkadot/api/types'
import type { KeyringPair } from '@polkadot/keyring/types'
import type { ISubmittableResult } from '@polkadot/types/types'
import { u8aToHex } from '@polkadot/util'
import { randomAsU8a } from '@polkadot/util-crypto'
import type { Plain } from './plain.js'
import type { DisputeKind, SubmitTaskArgs } from '../../protocols/pallet-types.js'
import { peerBindingPayload } from '../../protocols/identity/peer-binding.js'
import { challengeBytes, challengeCommitment, type ChallengeKind } from '../../protocols/dispute/challenge-commit.js'
import { ChainError, eventOf, type ChainClientOptions, type TxOutcome } from './client-types.js'
import { ChainQueries } from './queries.js'

/** An initial-state claim's ruling (InitialStateRuled): reason in UTF-8. */
export interface InitRuled { solverWrong: boolean, slashed: bigint, reason: string, outcome: TxOutcome }

// The chain client's writes: signing and submitting with an app-managed
// nonce, waiting for inclusion, and one method per Arbitration call.

export class ChainTransactions extends ChainQueries {
  readonly address: string
  private queue: Promise<unknown> = Promise.resolve()

  constructor (api: ApiPromise, readonly pair: KeyringPair, readonly opts: ChainClientOptions) {
    super(api, u8aToHex(pair.publicKey))
    this.address = pair.address
  }

  /**
   * Signs and submits with an app-managed nonce (submissions from this client
   * are serialized until the pool accepted them), then waits for inclusion
   * (or finality) and throws ChainError on a dispatch error.
   */
  async send (tx: SubmittableExtrinsic<'promise'>): Promise<TxOutcome> {
    const finalized = this.opts.finalized === true
    let settle!: { resolve: (o: TxOutcome) => void, reject: (e: Error) => void }
    const done = new Promise<TxOutcome>((resolve, reject) => { settle = { resolve, reject } })
    // `done` can be settled (the inclusion timer, a status reported before signAndSend resolves)
    // while this still waits for `submitted`: observed now, it is awaited below all the same
    done.catch(() => {})
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

  protected field (o: TxOutcome, method: string, name: string): Plain {
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

  /** Declares the runtimes (ids) this node runs among those that need a declaration (DECLARED_RUNTIMES), replacing its earlier list. */
  async setRuntimes (runtimes: readonly string[]): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.setRuntimes(runtimes.map(r => u8aToHex(new TextEncoder().encode(r)))))
  }

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

  // ---- commit–reveal of challenges (docs/economics.md "Copied disputes and claims") ----
  /**
   * Commits to a challenge of `kind` identified by `what` (a step, or claim bytes) with a fresh salt
   * (commit_challenge; a deposit of dispute_bond, back on the reveal); resolves once it is included,
   * with the salt the reveal names. A reveal sent after that lands in a later block, as the chain asks.
   */
  async commitChallenge (taskId: bigint | number, kind: ChallengeKind, what: number | Uint8Array): Promise<string> {
    const salt = randomAsU8a(32)
    const hash = challengeCommitment(this.pair.publicKey, BigInt(taskId), kind, challengeBytes(kind, what), salt)
    await this.send(this.api.tx.arbitration.commitChallenge(taskId, u8aToHex(hash)))
    return u8aToHex(salt)
  }

  /** open_dispute as the node opens it: committed in one block, revealed in the next (reveal_dispute), so the slash shares rank it before any copy. */
  async openDisputeCommitted (taskId: bigint | number, defender: string, kind: DisputeKind, disputedStep: number): Promise<bigint> {
    const salt = await this.commitChallenge(taskId, 'Dispute', disputedStep)
    const o = await this.send(this.api.tx.arbitration.revealDispute(taskId, defender, kind, disputedStep, salt))
    return this.field(o, 'DisputeOpened', 'disputeId') as bigint
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
  /** Challenges the solver of `taskId` to post sampled rows of its checkpoint at `checkpointStep`; resolves with the challenge id. */
  async challengeAvailability (taskId: bigint | number, checkpointStep: number): Promise<bigint> {
    const o = await this.send(this.api.tx.arbitration.challengeAvailability(taskId, checkpointStep))
    return this.field(o, 'AvailabilityChallenged', 'challengeId') as bigint
  }

  /** Challenges of every checkpoint in `steps` in one call (all opened or none); resolves with their ids, in order. */
  async challengeAvailabilityMany (taskId: bigint | number, steps: number[]): Promise<bigint[]> {
    const o = await this.send(this.api.tx.arbitration.challengeAvailabilityMany(taskId, steps))
    return o.events.filter(e => e.section === 'arbitration' && e.method === 'AvailabilityChallenged').map(e => (e.data as Record<string, unknown>).challengeId as bigint)
  }

  /** One part of the solver's serve of the challenged checkpoint: protocols/availability buildServeParts bytes (≤ 1 MiB). */
  async respondAvailability (challengeId: bigint | number, response: Uint8Array): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.respondAvailability(challengeId, u8aToHex(response)))
  }

  async availabilityTimeout (challengeId: bigint | number): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.availabilityTimeout(challengeId))
  }

  // ---- dataset availability (docs/economics.md "A withheld dataset") ----
  /** An assigned verifier challenges the task's dataset (with the task's program bytes); resolves with the challenge id. */
  async challengeDataset (taskId: bigint | number, program: Uint8Array): Promise<bigint> {
    const o = await this.send(this.api.tx.arbitration.challengeDataset(taskId, u8aToHex(program)))
    return this.field(o, 'DatasetChallenged', 'challengeId') as bigint
  }

  /** One part of a dataset serve: protocols/availability DatasetServer parts bytes (≤ 1 MiB). */
  async respondDataset (challengeId: bigint | number, part: Uint8Array): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.respondDataset(challengeId, u8aToHex(part)))
  }

  async datasetTimeout (challengeId: bigint | number): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.datasetTimeout(challengeId))
  }

  // ---- chunk sampling of erasure-coded checkpoints (docs/protocol.md §5, "Chunk sampling") ----
  /** Asks the chain for samples of the coded chunks of checkpoint `checkpointStep` (a deposit is reserved); resolves with the request id. */
  async sampleChunks (taskId: bigint | number, checkpointStep: number): Promise<bigint> {
    const o = await this.send(this.api.tx.arbitration.sampleChunks(taskId, checkpointStep))
    return this.field(o, 'ChunksRequested', 'requestId') as bigint
  }

  /** sample_chunks committed first, revealed in a later block (reveal_sample_chunks). */
  async sampleChunksCommitted (taskId: bigint | number, checkpointStep: number): Promise<bigint> {
    const salt = await this.commitChallenge(taskId, 'Chunks', checkpointStep)
    const o = await this.send(this.api.tx.arbitration.revealSampleChunks(taskId, checkpointStep, salt))
    return this.field(o, 'ChunksRequested', 'requestId') as bigint
  }

  /** One part of the solver's answer: protocols/erasure buildChunkResponses bytes (≤ 1 MiB). */
  async respondChunks (requestId: bigint | number, part: Uint8Array): Promise<TxOutcome> {
    return await this.send(this.api.tx.arbitration.respondChunks(requestId, u8aToHex(part)))
  }

  async chunksTimeout (requestId: bigint | number): Promise<TxOutcome> { return await this.send(this.api.tx.arbitration.chunksTimeout(requestId)) }

  /** Claims that state root 0 of the task's proof is not the program's initialisation (protocols/dispute/init-claim.ts encodeInitClaim bytes); resolves with the ruling. */
  async challengeInitialState (taskId: bigint | number, claim: Uint8Array): Promise<InitRuled> {
    return this.initRuling(await this.send(this.api.tx.arbitration.challengeInitialState(taskId, u8aToHex(claim))))
  }

  /** challenge_initial_state committed first, revealed in a later block (reveal_initial_state). */
  async challengeInitialStateCommitted (taskId: bigint | number, claim: Uint8Array): Promise<InitRuled> {
    const salt = await this.commitChallenge(taskId, 'InitialState', claim)
    return this.initRuling(await this.send(this.api.tx.arbitration.revealInitialState(taskId, u8aToHex(claim), salt)))
  }

  private initRuling (o: TxOutcome): InitRuled {
    const reason = this.field(o, 'InitialStateRuled', 'reason') as string
    const solverWrong = this.field(o, 'InitialStateRuled', 'solverWrong') as boolean
    return { solverWrong, slashed: BigInt(this.field(o, 'InitialStateRuled', 'slashed') as bigint), reason: Buffer.from(reason.replace(/^0x/, ''), 'hex').toString('utf8'), outcome: o }
  }

  /** The solver proves that a step ruled against it was its Truebit forced error (VRF pre-output 32 bytes, proof 64 bytes) with the path of its marked leaf (protocols/dispute/forced-leaf.ts encodeForcedLeafProof). */
  async revealForcedError (
    taskId: bigint | number, vrfOutput: Uint8Array, vrfProof: Uint8Array, exactness: Uint8Array
  ): Promise<{ step: number, outcome: TxOutcome }> {
    const o = await this.send(this.api.tx.arbitration.revealForcedError(taskId, u8aToHex(vrfOutput), u8aToHex(vrfProof), u8aToHex(exactness)))
    return { step: this.field(o, 'ForcedErrorRevealed', 'step') as number, outcome: o }
  }

  /** The solver reveals its forced-error draw (every pick's VRF) when the chain asks for it before paying the task (DrawRequested); forcedSteps: the steps it ordered (none: empty), forcedStep the first or null. */
  async revealDraw (
    taskId: bigint | number, vrfOutputs: Uint8Array[], vrfProofs: Uint8Array[]
  ): Promise<{ forcedStep: number | null, forcedSteps: number[], outcome: TxOutcome }> {
    const o = await this.send(this.api.tx.arbitration.revealDraw(taskId, vrfOutputs.map(o => u8aToHex(o)), vrfProofs.map(p => u8aToHex(p))))
    const forcedSteps = ((this.field(o, 'DrawRevealed', 'forcedSteps') ?? []) as Array<number | string>).map(Number)
    return { forcedStep: this.field(o, 'DrawRevealed', 'forcedStep') as number | null, forcedSteps, outcome: o }
  }
}
