import { hexToU8a, u8aToHex } from '@polkadot/util'
import { DECLARED_RUNTIMES } from '../../../protocols/program/runtime.js'
import type { Plain } from './codec.js'
import type { Context } from './context.js'

// Runtime capabilities (docs/economics.md "Runtimes a peer cannot run in
// time"). A task's program pins a runtime; psk1 trains and replays at full
// speed only where its native addon loads, and a peer without it, drawn for a
// psk1 task, replays with the JavaScript kernels and may miss its deadline:
// honest, yet lapsed (B + R), or slashed as a solver. So a peer declares the
// runtimes that need a declaration it runs (set_runtimes), and the chain
// selects a task's solver and reserves and draws its verifiers only among the
// peers that declared the task's runtime. Lying gains nothing: declaring a
// runtime it cannot run only exposes the liar to the lapse it had before, and
// declaring none only forgoes those tasks' pay (it is never drawn for them).

const P = 'Arbitration'
const MAX_DECLARED = 8
const hexOf = (id: string): string => u8aToHex(new TextEncoder().encode(id))
const DECLARED_HEX = new Set(DECLARED_RUNTIMES.map(hexOf))

export function setRuntimes (ctx: Context, who: string, a: { runtimes: string[] }): void {
  if (ctx.store.get(P, 'Nodes', who) === undefined) ctx.fail(P, 'NotRegistered')
  ctx.ensure(a.runtimes.length <= MAX_DECLARED && new Set(a.runtimes).size === a.runtimes.length && a.runtimes.every(r => DECLARED_HEX.has(r)), P, 'UnknownRuntime')
  if (a.runtimes.length === 0) ctx.store.remove(P, 'NodeRuntimes', who)
  else ctx.store.put(P, 'NodeRuntimes', who, a.runtimes)
  ctx.emit(P, 'RuntimesDeclared', { who, runtimes: a.runtimes })
}

/** The node left: its declaration goes with it (a new registration declares again). */
export function forgetRuntimes (ctx: Context, who: string): void {
  ctx.store.remove(P, 'NodeRuntimes', who)
}

/** At submit_task: the task's runtime, stored when it needs a declaration. */
export function setTaskRuntime (ctx: Context, id: bigint, runtime: string): void {
  const hex = hexOf(runtime)
  if (DECLARED_HEX.has(hex)) ctx.store.put(P, 'TaskRuntime', id, hex)
}

/** The runtime (hex of its id) a task's solver and verifiers must have declared, if any. */
export const taskRuntime = (ctx: Context, id: bigint): string | undefined => ctx.store.get<string>(P, 'TaskRuntime', id)

/** Whether `who` may be selected or drawn for a task needing `runtime` (undefined: any node may). */
export function runsRuntime (ctx: Context, who: string, runtime: string | undefined): boolean {
  if (runtime === undefined) return true
  return ctx.store.read<string[]>(P, 'NodeRuntimes', who).includes(runtime)
}

/** The UTF-8 id of a stored runtime (for logs and events). */
export const runtimeName = (hex: string): string => new TextDecoder().decode(hexToU8a(hex))

export const CAPABILITY_HANDLERS: Record<string, (ctx: Context, who: string, args: Record<string, Plain>) => void> = {
  'Arbitration.set_runtimes': (ctx, who, a) => setRuntimes(ctx, who, a as never)
}
