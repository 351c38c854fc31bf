import { requiredSample } from '../../protocols/verification/verdict.js'

// The steps an accepting verdict must list on chain (0-based), as the runtime
// computes them: tests that submit verdicts by hand list these.

export interface SampledTask { committedAt: number, stepCount: number, verifierCount: number }

/** The verifier's required sample on chain (0-based), from the randomness of block committedAt + 1. */
export function chainSample (randomness: string, account: string, t: SampledTask): number[] {
  // a proof that diverged at its first step has no completed step to sample
  return t.stepCount === 0 ? [] : requiredSample(randomness, account, t.stepCount, t.verifierCount).map(s => s - 1)
}

/** On a runtime harness (test/unit/chain/harness.ts): the sample of `who` (a name or an account) for task `taskId`, once its randomness block (its assignment's seed block; committedAt + 1 before the draw) exists. */
export function harnessSample (
  h: { read: <T>(pallet: string, item: string, key?: never) => T | undefined, accounts: Record<string, string>, number: number }, who: string, taskId = 0
): number[] {
  const t = h.read<SampledTask>('Arbitration', 'Tasks', taskId as never)
  if (t === undefined) throw new Error(`no task ${taskId}`)
  // a replacement's sample is seeded by its own round's randomness block
  const account = h.accounts[who] ?? who
  const mine = harnessAssignments(h, taskId)?.verifiers.find(v => v.verifier === account)
  const block = mine?.seedBlock ?? t.committedAt + 1
  if (h.number < block) throw new Error(`block ${block} (verification randomness) is not produced yet`)
  const hash = h.read<string>('Randomness', 'ByBlock', block as never)
  if (hash === undefined) throw new Error(`no randomness of block ${block} in storage`)
  return chainSample(hash, account, t)
}

/** Over RPC (node/chain/client.ts ChainClient): the caller's sample for task `taskId`. */
export async function clientSample (
  c: { accountId: string, task: (id: bigint | number) => Promise<SampledTask | null>, randomness: (n: number) => Promise<string | null> },
  taskId: bigint | number
): Promise<number[]> {
  const t = await c.task(taskId)
  if (t == null) throw new Error(`no task ${taskId}`)
  const hash = await c.randomness(t.committedAt + 1)
  if (hash == null) throw new Error(`block ${t.committedAt + 1} (verification randomness) is not produced yet`)
  return chainSample(hash, c.accountId, t)
}

interface AssignmentsView {
  round: number
  drawAt: number
  seedBlock: number
  verifiers: Array<{ verifier: string, round: number, seedBlock: number, deadline: number, backed: boolean, status: string }>
}

/** On a runtime harness: the task's verifier assignments (undefined before the first draw). */
export function harnessAssignments (h: { read: <T>(pallet: string, item: string, key?: never) => T | undefined }, taskId = 0): AssignmentsView | undefined {
  return h.read<AssignmentsView>('Arbitration', 'Assignments', taskId as never)
}

/** On a runtime harness: the names (keys of h.accounts) of the task's active assigned verifiers, in draw order. */
export function assignedNames (
  h: { read: <T>(pallet: string, item: string, key?: never) => T | undefined, accounts: Record<string, string> }, taskId = 0
): string[] {
  const a = harnessAssignments(h, taskId)
  const name = (acc: string): string => Object.entries(h.accounts).find(([, v]) => v === acc)?.[0] ?? acc
  return (a?.verifiers ?? []).filter(v => v.status === 'Active').map(v => name(v.verifier))
}
