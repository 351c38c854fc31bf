import { createActor } from 'xstate'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeSupervisor, type RolePorts, type TaskSpec } from '../../../actors/index.js'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../../devnet/chain/runtime/arbitration.js'
import { serveRoutes, type RouteDefinitions } from '../../../node/control/routes.js'
import { ControlServer } from '../../../node/control/server.js'
import { rolesRoutes, type RolesEndpoints } from '../../../node/roles/api/routes.js'
import { submitHandler } from '../../../node/roles/api/submit.js'
import * as reference from '../../../protocols/reference/index.js'
import { minWindow, taskProgram } from '../../helpers/program.js'
import { Harness } from '../chain/harness.js'

// POST /v1/submit answers with the id of the task it put on chain. Two
// requests at once on one peer used to get the same id (both read the first
// id that appeared in the submitter actor's open list) while the second task
// went unreported. Requests go over HTTP to the control server with the
// declared route, to the real supervisor and submitter actors; the
// submitter's chain port submits on the real runtime (test/unit/chain/harness.ts),
// one block per submission, after a delay like a round trip's.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const PROGRAM = taskProgram()
const TOKEN = 'test-token'
let stop: (() => Promise<void>) | undefined
afterEach(async () => { await stop?.(); stop = undefined })

type Post = (economics: TaskSpec['economics']) => Promise<number>

async function peer (fail?: (spec: TaskSpec) => string | undefined): Promise<{ h: Harness, post: Post }> {
  const h = await Harness.create({ reference })
  const ports = {
    submitTask: async (spec: TaskSpec) => {
      await new Promise(resolve => setTimeout(resolve, 20))
      const why = fail?.(spec)
      if (why !== undefined) throw new Error(why)
      const id = Number(h.read<bigint>('Arbitration', 'NextTaskId') ?? 0n)
      const r = h.run('Alice', 'Arbitration', 'submit_task', {
        programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3),
        steps: 100, checkpointEvery: 10, escrow: 1000n * UNIT,
        solverReward: BigInt(spec.economics!.solverReward!), verifierReward: 100n * UNIT, verifierCount: 2, solveTimeout: 20,
        challengeWindow: minWindow(PROGRAM, 2)
      })
      if (r.error !== undefined) throw new Error(r.error)
      return { taskId: id, programHash: PROGRAM.programHash }
    },
    collectResult: async () => await new Promise<never>(() => {})
  } as unknown as RolePorts
  const actor = createActor(nodeSupervisor, { input: { roles: ['submitter'], roleInput: ports } })
  actor.start()
  const server = new ControlServer(TOKEN)
  const defs: RouteDefinitions<Pick<RolesEndpoints, 'submit'>> = { submit: rolesRoutes.submit }
  serveRoutes(server, defs, { submit: submitHandler({ actor, send: ev => actor.send(ev as never) }) })
  const base = `http://127.0.0.1:${await server.listen(0)}`
  stop = async () => { actor.stop(); await server.close() }
  const post: Post = async economics => {
    const res = await fetch(base + '/v1/submit', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ program: PROGRAM.program, economics }) })
    const json = await res.json() as { taskId?: number, error?: string }
    if (res.status !== 200) throw new Error(`${res.status} ${json.error ?? ''}`)
    return json.taskId!
  }
  return { h, post }
}

const reward = (i: number): string => String(500n * UNIT + BigInt(i))

describe('POST /v1/submit on one peer', () => {
  it('five requests at once get five different ids, each the id of its own task on chain', async () => {
    const { h, post } = await peer()
    const ids = await Promise.all([0, 1, 2, 3, 4].map(async i => await post({ solverReward: reward(i) })))
    expect(new Set(ids).size).toBe(5)
    ids.forEach((id, i) => expect(h.read<TaskInfo>('Arbitration', 'Tasks', id as never)!.solverReward).toBe(BigInt(reward(i))))
  })

  it('a failed submission among concurrent ones fails only its own request, even with the same error text twice', async () => {
    const { h, post } = await peer(spec => spec.economics?.solverReward === reward(1) || spec.economics?.solverReward === reward(3) ? 'InsufficientEscrow' : undefined)
    const out = await Promise.allSettled([0, 1, 2, 3, 4].map(async i => await post({ solverReward: reward(i) })))
    expect(out.map(o => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'])
    for (const i of [1, 3]) expect(String((out[i] as PromiseRejectedResult).reason.message)).toMatch(/^502 submission failed: .*InsufficientEscrow/)
    for (const i of [0, 2, 4]) {
      const id = (out[i] as PromiseFulfilledResult<number>).value
      expect(h.read<TaskInfo>('Arbitration', 'Tasks', id as never)!.solverReward).toBe(BigInt(reward(i)))
    }
  })
})
