import { forcedLeaf } from '../../protocols/dispute/forced-leaf.js'
import type { CommitScheme } from '../../protocols/commit/scheme.js'
import type { CheckpointRef } from '../../protocols/pol/proof.js'
import { isCommittedStep, leafOfStep } from '../../protocols/pol/segments.js'
import type { StateHasher } from './state-hasher.js'
import { RootsFile } from './store.js'
import type { Trainer } from './trainer.js'

// What a verifiable run records as it goes: every committed state's root
// (hashed by the StateHasher, in order) and, at checkpoint steps, the
// checkpoint (written by the hashing thread) followed by the roots since the
// last one in state-roots.bin, so the roots on disk never run ahead of a
// checkpoint. With roots every m steps (docs/training.md "State roots every m
// steps") only steps 0, m, 2m, … and the last are committed: the others are
// neither copied nor hashed, which is the point of m. `roots[j]` and root j of
// state-roots.bin are leaf j (the state after step min(j·m, steps)); at m = 1
// leaf j is step j.

export interface RecorderOptions {
  outDir: string
  phash: string
  names: string[]
  stateSizes: number[]
  checkpointEvery: number
  steps: number
  /** the program's state-root spacing m (default 1) */
  rootEvery?: number
  /** a checkpoint of state `step` is on disk, with every root before it */
  onCheckpoint?: (step: number) => void
  /** forced errors at on-chain steps f: each state f + 1's root is recorded as forcedLeaf(root) (never a checkpoint: the draw excludes them) */
  forcedSteps?: number[]
  /** the program's state commitment (absent: row + column) */
  stateCommitment?: CommitScheme
}

export class ProofRecorder {
  readonly roots: Array<Promise<Uint8Array>> = []
  readonly checkpoints: CheckpointRef[] = []
  private readonly pending: Array<Promise<CheckpointRef>> = []
  private rootsFile: RootsFile | undefined
  /** roots handed to rootsFile: 0 … rootsWritten - 1 */
  private rootsWritten = 0

  constructor (readonly hasher: StateHasher, private readonly o: RecorderOptions) {}

  /** A fresh run: state-roots.bin starts empty. */
  startFresh (): void { this.rootsFile = new RootsFile(this.o.outDir) }

  get rootEvery (): number { return this.o.rootEvery ?? 1 }

  /** Whether state `s` gets a root: a committed step. */
  commits (s: number): boolean { return isCommittedStep(s, this.o.steps, this.rootEvery) }

  /** A resumed run: the roots of the committed steps 0..c are known (and kept on disk), as are the checkpoints up to c. */
  resumeAt (c: number, prevRoots: Uint8Array[], checkpoints: CheckpointRef[]): void {
    const n = leafOfStep(c, this.o.steps, this.rootEvery) + 1
    for (const r of prevRoots.slice(0, n)) this.roots.push(Promise.resolve(r))
    this.checkpoints.push(...checkpoints)
    this.rootsFile = new RootsFile(this.o.outDir, n)
    this.rootsWritten = n
  }

  /** Hands state `s` to the hasher if it is committed: its root, and at checkpoint steps its checkpoint. */
  async submit (trainer: Trainer, s: number): Promise<void> {
    if (!this.commits(s)) return
    const h = this.hasher
    const isCheckpoint = s === 0 || s % this.o.checkpointEvery === 0 || s === this.o.steps
    const checkpoint = isCheckpoint ? { runDir: this.o.outDir, programHash: this.o.phash, names: this.o.names } : undefined
    const { result } = await h.submit({
      step: s, tensors: trainer.stateCopies(h.buffers(this.o.stateSizes)), checkpoint, ...(this.o.stateCommitment === 'chunked' ? { stateCommitment: 'chunked' as const } : {})
    })
    const marked = this.o.forcedSteps?.includes(s - 1) === true
    if (marked && isCheckpoint) throw new Error(`a forced error cannot mark checkpoint ${s}`)
    this.roots.push(quiet(result.then(r => marked ? forcedLeaf(r.root) : r.root)))
    if (isCheckpoint) {
      const from = this.rootsWritten
      const fresh = this.roots.slice(from)
      this.rootsWritten = this.roots.length
      // results do not arrive in order: a state the hasher ran inline (its worker behind) is done before the
      // worker's earlier ones, so each checkpoint waits for the one before it (checkpoints and roots on disk in order)
      const before = this.pending[this.pending.length - 1]
      this.pending.push(quiet(result.then(async r => {
        await before
        this.rootsFile?.write(from, await Promise.all(fresh))
        this.o.onCheckpoint?.(s)
        return { step: s, manifestHash: r.manifestHash as string }
      })))
    }
  }

  /** Waits for the checkpoints still being written and adds them to `checkpoints`. */
  async settleCheckpoints (): Promise<void> {
    this.checkpoints.push(...await Promise.all(this.pending))
  }

  /** Adds the root of a diverged run's last state when it is not a multiple of m (a diverged proof of k steps commits state k). */
  addRoot (root: Uint8Array): void { this.roots.push(Promise.resolve(root)) }

  /** Writes the roots recorded since the last checkpoint (a diverged run's proof ends between checkpoints). */
  async writeRemainingRoots (): Promise<void> {
    const fresh = await Promise.all(this.roots.slice(this.rootsWritten))
    this.rootsFile?.write(this.rootsWritten, fresh)
    this.rootsWritten = this.roots.length
  }

  close (): void { this.rootsFile?.close() }
}

/** Marks a promise as handled (it is awaited later; an early exit must not crash the process). */
function quiet<T> (p: Promise<T>): Promise<T> {
  p.catch(() => {})
  return p
}
