import type { ChainClient } from '../chain/client.js'
import type { TaskInfo } from '../../protocols/pallet-types.js'
import type { Logger } from '../log.js'

// What the parties that answer a challenge on chain share (the solver's
// checkpoint serves and chunk samples, the submitter's dataset rows): each
// open challenge is answered once at a time in the background, whether it
// came as an event or was found on chain after a restart, and the last
// outcomes are kept for the status API and tests.

export const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

/** The runtime error's name (`arbitration.X`) of a rejected transaction; '' for transport trouble. */
export const errName = (e: unknown): string => (e as { error?: string }).error ?? ''

const KEPT_OUTCOMES = 100

export abstract class ChallengeResponder<Outcome> {
  /** the last outcomes, oldest first */
  readonly handled: Outcome[] = []
  private readonly inFlight = new Set<number>()

  /** `what` names the challenge in logs: "dataset challenge", … */
  protected constructor (protected readonly chain: () => Promise<ChainClient>, protected readonly log: Logger, private readonly what: string) {}

  /** Answers challenge `id`; resolves once it is served, closed or cannot be answered. */
  abstract answer (id: number): Promise<void>

  /** Is this node the party that must answer challenges of this task? */
  protected abstract answers (task: TaskInfo, me: string): boolean

  /** The open challenges of a task this node must answer. */
  protected abstract openChallenges (chain: ChainClient, taskId: bigint): Promise<number[]>

  /** Answers the open challenges found on chain (events are missed while a node is down). */
  async catchUp (): Promise<void> {
    const chain = await this.chain()
    for (const taskId of await chain.openTasks()) {
      const t = await chain.task(taskId)
      if (t == null || !this.answers(t, chain.accountId) || t.phase !== 'Verifying' || t.openDisputes === 0) continue
      for (const id of await this.openChallenges(chain, taskId)) this.start(id)
    }
  }

  protected start (id: number): void {
    if (this.inFlight.has(id)) return
    this.inFlight.add(id)
    void this.answer(id)
      .catch(err => this.log.error({ err: (err as Error).message, challengeId: id }, `answering the ${this.what} failed`))
      .finally(() => this.inFlight.delete(id))
  }

  protected record (outcome: Outcome): void {
    this.handled.push(outcome)
    if (this.handled.length > KEPT_OUTCOMES) this.handled.shift()
  }
}
