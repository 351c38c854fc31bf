import { u8aToHex } from '@polkadot/util'
import type { AccountInfo } from './account-info.js'
import type { Context } from './context.js'

// Balances on System.Account (free/reserved). Reserve, unreserve, repatriate
// and slash are runtime functions used by Arbitration (stakes, escrow,
// bonds); they are deliberately not extrinsics, so nobody can unreserve a stake.

export type { AccountData, AccountInfo } from './account-info.js'

/** The jackpot treasury: PalletId "ps/jackp" as a Substrate module account. */
export const TREASURY = u8aToHex(new Uint8Array([...new TextEncoder().encode('modlps/jackp'), ...new Uint8Array(20)]))

export function getAccount (ctx: Context, who: string): AccountInfo {
  return ctx.store.read<AccountInfo>('System', 'Account', who)
}

export function putAccount (ctx: Context, who: string, a: AccountInfo): void {
  ctx.store.put('System', 'Account', who, a)
}

function credit (ctx: Context, who: string, amount: bigint): void {
  const a = getAccount(ctx, who)
  const created = a.providers === 0
  if (created) {
    a.providers = 1
    ctx.emit('System', 'NewAccount', { account: who })
    ctx.emit('Balances', 'Endowed', { account: who, freeBalance: amount })
  }
  a.data.free += amount
  putAccount(ctx, who, a)
}

export function transfer (ctx: Context, from: string, to: string, amount: bigint, keepAlive: boolean): void {
  const existential = ctx.types.constants.existentialDeposit
  const a = getAccount(ctx, from)
  ctx.ensure(a.data.free >= amount, 'Balances', 'InsufficientBalance')
  const left = a.data.free - amount
  if (keepAlive) ctx.ensure(left >= existential || (left === 0n && amount === 0n), 'Balances', 'Expendability')
  if (from === to) return
  const b = getAccount(ctx, to)
  ctx.ensure(b.providers > 0 || amount >= existential, 'Balances', 'ExistentialDeposit')
  a.data.free = left
  putAccount(ctx, from, a)
  credit(ctx, to, amount)
  ctx.emit('Balances', 'Transfer', { from, to, amount })
}

export function reserve (ctx: Context, who: string, amount: bigint, onFail: [string, string] = ['Balances', 'InsufficientBalance']): void {
  const a = getAccount(ctx, who)
  ctx.ensure(a.data.free >= amount, onFail[0], onFail[1])
  a.data.free -= amount
  a.data.reserved += amount
  putAccount(ctx, who, a)
  if (amount > 0n) ctx.emit('Balances', 'Reserved', { who, amount })
}

export function unreserve (ctx: Context, who: string, amount: bigint): void {
  const a = getAccount(ctx, who)
  ctx.ensure(a.data.reserved >= amount, 'Balances', 'InsufficientReserved')
  a.data.reserved -= amount
  a.data.free += amount
  putAccount(ctx, who, a)
  if (amount > 0n) ctx.emit('Balances', 'Unreserved', { who, amount })
}

/** Moves reserved balance of `from` to the free balance of `to`. */
export function repatriateReserved (ctx: Context, from: string, to: string, amount: bigint): void {
  if (amount === 0n) return
  const a = getAccount(ctx, from)
  ctx.ensure(a.data.reserved >= amount, 'Balances', 'InsufficientReserved')
  a.data.reserved -= amount
  putAccount(ctx, from, a)
  credit(ctx, to, amount)
  ctx.emit('Balances', 'ReserveRepatriated', { from, to, amount })
}

/** Moves reserved balance of `who` into the treasury. */
export function slashReserved (ctx: Context, who: string, amount: bigint): void {
  if (amount === 0n) return
  const a = getAccount(ctx, who)
  ctx.ensure(a.data.reserved >= amount, 'Balances', 'InsufficientReserved')
  a.data.reserved -= amount
  putAccount(ctx, who, a)
  credit(ctx, TREASURY, amount)
  ctx.emit('Balances', 'Slashed', { who, amount })
}

/** Pays up to `amount` from the treasury's free balance; returns what was paid. */
export function payFromTreasury (ctx: Context, to: string, amount: bigint): bigint {
  return payFromModule(ctx, TREASURY, to, amount)
}

/** Pays `amount` (at most its free balance) from a module account's free balance (the challenge pot); returns what was paid. */
export function payFromModule (ctx: Context, from: string, to: string, amount: bigint): bigint {
  const f = getAccount(ctx, from)
  const paid = f.data.free < amount ? f.data.free : amount
  if (paid === 0n) return 0n
  f.data.free -= paid
  putAccount(ctx, from, f)
  credit(ctx, to, paid)
  ctx.emit('Balances', 'Transfer', { from, to, amount: paid })
  return paid
}
