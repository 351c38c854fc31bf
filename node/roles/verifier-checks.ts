import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { VerifyResult } from '../../actors/ports.js'
import { assembleServe, servedStateBytes } from '../../protocols/availability/index.js'
import { fromHex } from '../../protocols/commit/merkle.js'
import type { CommitScheme } from '../../protocols/commit/scheme.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import type { RunIndex } from '../../protocols/verification/run-index.js'
import type { ChainClient } from '../chain/client.js'
import { initClaimBytes, initialStateMatches, stateFromCheckpoint } from './initial-state.js'
import { PortsPart } from './ports-part.js'
import { checkpointDir } from '../train/store.js'

// What a verifier checks before it replays: the proof's initial state, and
// the solver's checkpoints fetched from the solver itself (or read from the
// chain once the solver served them there for an availability challenge).

export class VerifierChecks extends PortsPart {
  /**
   * Compares the proof's stateRoots[0] with the program's initial state root; on a
   * mismatch, claims the first wrong element of the solver's checkpoint 0 on chain
   * (challenge_initial_state) and returns the reject verdict. Undefined: it matches.
   * `checkpointZero` writes the solver's checkpoint 0 into a directory (from the solver, or
   * from its serve on chain) and returns why it cannot.
   */
  async checkInitialState (
    chain: ChainClient, taskId: number, program: TaskProgram, stateRoots: string[], runDir: string,
    checkpointZero: (dir: string) => Promise<string | undefined>
  ): Promise<VerifyResult | undefined> {
    const t0 = performance.now()
    const v = initialStateMatches(program, stateRoots[0])
    this.log.debug({ taskId, ms: +(performance.now() - t0).toFixed(1) }, 'initial state compared')
    if (v.ok) {
      if ('unsupported' in v) this.log.warn({ taskId, reason: v.unsupported }, 'the initial state cannot be checked')
      return undefined
    }
    this.log.warn({ taskId }, 'the proof does not start from the program\'s initial state')
    const dir = checkpointDir(runDir, 0)
    mkdirSync(dir, { recursive: true })
    const problem = await checkpointZero(dir)
    if (problem != null) return { accept: false, checkedSteps: [], unavailable: { step: 0, reason: problem } }
    const state = stateFromCheckpoint(program, readFileSync(join(dir, 'state.bin')), stateRoots[0])
    // a checkpoint that is not the committed state is a data-availability matter
    if (typeof state === 'string') return { accept: false, checkedSteps: [], unavailable: { step: 0, reason: state } }
    // committed a block before it is revealed: a watcher copying it from the pool ranks after it for the shares
    const r = await chain.challengeInitialStateCommitted(taskId, initClaimBytes(program, stateRoots, state))
    this.log.info({ taskId, solverWrong: r.solverWrong, slashed: r.slashed.toString(), reason: r.reason }, 'initial state challenged on chain')
    return { accept: false, checkedSteps: [], initialState: { solverWrong: r.solverWrong, reason: r.reason } }
  }

  /** The solver's libp2p peer id, as registered on chain (undefined when it is not registered). */
  async solverPeerOf (chain: ChainClient, solver: string | null | undefined): Promise<string | undefined> {
    if (solver == null) return undefined
    const node = await chain.node(solver)
    return node == null ? undefined : Buffer.from(node.peerId.replace(/^0x/, ''), 'hex').toString('utf8')
  }

  /**
   * Writes a checkpoint the solver served on chain (challenge `id`: its AvailabilityServed parts)
   * into `dir` as state.bin, the tensors back to back; returns why it cannot be read.
   */
  async readServed (
    chain: ChainClient, id: number, at: { proofRoot: string, step: number, stepCount: number, rootEvery: number, stateCommitment?: CommitScheme }, dir: string
  ): Promise<string | undefined> {
    try {
      const parts = await chain.servedParts(id)
      const { tensors } = assembleServe({ ...at, proofRoot: fromHex(at.proofRoot.replace(/^0x/, '')) }, parts)
      writeFileSync(join(dir, 'state.bin'), servedStateBytes(tensors))
      this.log.info({ challengeId: id, step: at.step, parts: parts.length }, 'checkpoint read from its serve on chain')
      return undefined
    } catch (err) {
      return `served on chain, but unreadable: ${(err as Error).message}`
    }
  }

  /**
   * Fetches a checkpoint's data (state.bin) into `dir` from the solver; returns why it cannot be obtained.
   * Not its manifest: the engine lays the data out as the program's state and checks it by the
   * state roots it replays (node/train/replay-many.ts loadByProgram), so the manifest's fetch
   * (a whole request for 2.6 kB) and a sha256 of the file are saved.
   */
  /**
   * `maxBytes`: the program's state size (protocols/verification/fetch-limits.ts); a larger checkpoint
   * is refused unfetched. `signal` (node/roles/block-signal.ts) ends the download, however it is going.
   */
  async fetchCheckpoint (
    ck: RunIndex['checkpoints'][number], dir: string, solverPeer: string | undefined, maxBytes: number | undefined, signal?: AbortSignal
  ): Promise<string | undefined> {
    try {
      await this.shards.fetchToFile(ck.data, join(dir, 'state.bin'), { contentHash: false, maxBytes, signal, ...(solverPeer != null ? { providers: [solverPeer] } : {}) })
      return undefined
    } catch (err) {
      return `not obtainable: ${(err as Error).message}`
    }
  }
}
