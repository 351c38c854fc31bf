import type { ChainClient, ChainEvent } from '../chain/client.js'
import type { Logger } from '../log.js'
import { forcedErrorDraw } from './forced-error.js'

// The solver's side of settlement on a chain with forced errors: once its
// task is verified, the chain asks for its private draw (DrawRequested) and
// pays it only after the reveal (devnet/chain/runtime/draw-reveal.ts). The
// draw is recomputed from the key, so a solver restarted while the request
// is open still reveals (catchUp). Not revealing costs the jackpot.

export interface DrawRevealerInit {
  chain: () => Promise<ChainClient>
  log: Logger
}

/** forcedStep: the first of forcedSteps, or null */
export interface RevealedDraw { taskId: number, forcedStep: number | null, forcedSteps: number[], ms: number }

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

export class DrawRevealer {
  /** reveals made, for status and tests */
  readonly revealed: RevealedDraw[] = []
  private readonly inFlight = new Set<number>()

  constructor (private readonly o: DrawRevealerInit) {}

  /** Feed every chain event here; a request for a task this node solved is answered in the background. */
  onChainEvent (e: ChainEvent): void {
    if (e.section !== 'arbitration' || e.method !== 'DrawRequested') return
    this.start(Number(e.data.taskId))
  }

  /** Open requests for this node's tasks found on chain (after a restart the events were missed). */
  async catchUp (): Promise<void> {
    const chain = await this.o.chain()
    for (const id of await chain.openTasks()) {
      const t = await chain.task(id)
      if (t == null || t.solver !== chain.accountId || t.phase !== 'Verifying') continue
      const r = await chain.drawRequest(id)
      if (r != null && !r.revealed) this.start(Number(id))
    }
  }

  private start (taskId: number): void {
    if (this.inFlight.has(taskId)) return
    this.inFlight.add(taskId)
    void this.reveal(taskId)
      .catch(err => this.o.log.error({ taskId, err: (err as Error).message }, 'revealing our forced-error draw failed'))
      .finally(() => this.inFlight.delete(taskId))
  }

  /** reveal_draw while the request is open; a task of another solver, or one already revealed, is left alone. */
  async reveal (taskId: number): Promise<void> {
    const t0 = Date.now()
    const chain = await this.o.chain()
    for (let attempt = 0; attempt < 5; attempt++) {
      const [task, request] = await Promise.all([chain.task(taskId), chain.drawRequest(taskId)])
      if (task == null || task.solver !== chain.accountId || request == null || request.revealed) return
      const draw = await forcedErrorDraw(chain, taskId, task)
      if (draw == null) return
      try {
        const { forcedStep, forcedSteps } = await chain.revealDraw(taskId, draw.picks.map(p => p.output), draw.picks.map(p => p.proof))
        this.revealed.push({ taskId, forcedStep, forcedSteps, ms: Date.now() - t0 }); if (this.revealed.length > 100) this.revealed.shift()
        this.o.log.info({ taskId, forcedSteps }, forcedSteps.length === 0
          ? 'revealed our forced-error draw at settlement: it ordered none, the reward is paid in full'
          : 'revealed our forced-error draw at settlement: it ordered forced errors, the jackpot comes out of our reward')
        return
      } catch (err) {
        this.o.log.warn({ taskId, deadline: request.deadline, err: (err as Error).message }, 'reveal_draw failed; retrying')
        await sleep(1000)
      }
    }
    this.o.log.error({ taskId }, 'could not reveal our forced-error draw: the jackpot will come out of our reward')
  }
}
