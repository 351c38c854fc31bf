import { hexToU8a, isHex, u8aToHex } from '@polkadot/util'
import { blake2AsU8a, decodeAddress } from '@polkadot/util-crypto'
import type { DevChain, TxStatus } from './chain.js'
import { RpcError } from './rpc-errors.js'
import { hexParam, invalidParams, optHash } from './rpc-params.js'
import { blockAt, keysAt, storageAt } from './rpc-state.js'
import type { Conn, Params, Subscriptions } from './rpc-subscriptions.js'
import { runtimeCall } from './runtime-api.js'
import type { StoredBlock } from './store.js'

// The Substrate JSON-RPC methods the dev chain serves: the subset @polkadot/api
// uses, their legacy aliases, and engine_createBlock (manual seal) for tests.

const MAX_KEYS = 1000

export type Method = (p: Params, c: Conn) => unknown

export interface RpcMethodOptions {
  name?: string
  unsafeRpc?: boolean
}

/** Every method the server answers, by name (aliases included); engine_createBlock only with unsafeRpc. */
export function buildMethods (c: DevChain, opts: RpcMethodOptions, subs: Subscriptions): Record<string, Method> {
  const rt = c.runtime
  const version = (): unknown => rt.version
  const methods: Record<string, Method> = {
    rpc_methods: () => ({ version: 1, methods: Object.keys(methods).sort() }),
    system_chain: () => opts.name ?? 'proofswarm dev',
    system_name: () => 'proofswarm-devchain',
    system_version: () => '0.1.0',
    system_chainType: () => 'Development',
    system_properties: () => ({ ss58Format: rt.genesis.constants.ss58Prefix, tokenDecimals: 12, tokenSymbol: 'UNIT' }),
    system_health: () => ({ peers: 0, isSyncing: false, shouldHavePeers: false }),
    system_peers: () => [],
    system_localPeerId: () => '',
    system_nodeRoles: () => ['Authority'],
    system_syncState: () => ({ startingBlock: 0, currentBlock: c.headNumber, highestBlock: c.headNumber }),
    system_accountNextIndex: p => {
      if (typeof p[0] !== 'string') throw invalidParams('account id')
      let acc: string
      try { acc = u8aToHex(decodeAddress(p[0])) } catch { throw invalidParams('account id is not an SS58 address or 32-byte hex') }
      return c.nextNonce(acc)
    },
    chain_getBlockHash: p => {
      const one = (n: unknown): string | null => {
        if (n === undefined || n === null) return c.head.hash
        const v = typeof n === 'string' && isHex(n) ? parseInt(n, 16) : n
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalidParams('block number')
        return c.hashes[v] ?? null
      }
      return Array.isArray(p[0]) ? p[0].slice(0, MAX_KEYS).map(one) : one(p[0])
    },
    chain_getHeader: p => {
      const h = optHash(p[0])
      const b = h === undefined ? c.head : c.blocks.get(h)
      return b === undefined ? null : b.header
    },
    chain_getBlock: p => {
      const h = optHash(p[0])
      const b = h === undefined ? c.head : c.blocks.get(h)
      return b === undefined ? null : { block: { header: b.header, extrinsics: b.extrinsics }, justifications: null }
    },
    chain_getFinalizedHead: () => c.finalizedHash,
    chain_subscribeNewHeads: (_p, conn) => headSub(c, subs, conn, 'chain_newHead', 'block', () => c.head),
    chain_subscribeAllHeads: (_p, conn) => headSub(c, subs, conn, 'chain_allHead', 'block', () => c.head),
    chain_subscribeFinalizedHeads: (_p, conn) => headSub(c, subs, conn, 'chain_finalizedHead', 'finalized', () => c.blocks.get(c.finalizedHash) as StoredBlock),
    chain_unsubscribeNewHeads: (p, conn) => subs.unsubscribe(conn, p),
    chain_unsubscribeAllHeads: (p, conn) => subs.unsubscribe(conn, p),
    chain_unsubscribeFinalizedHeads: (p, conn) => subs.unsubscribe(conn, p),
    state_getMetadata: p => { blockAt(c, optHash(p[0])); return rt.types.metadataHex },
    state_getRuntimeVersion: p => { blockAt(c, optHash(p[0])); return version() },
    state_call: p => {
      if (typeof p[0] !== 'string') throw invalidParams('method must be a string')
      blockAt(c, optHash(p[2]))
      return runtimeCall(p[0], p[1] === undefined || p[1] === null ? '0x' : hexParam(p[1], 'data'), rt.types.metadataHex)
    },
    state_getStorage: async p => await storageAt(c, hexParam(p[0], 'storage key'), optHash(p[1])),
    state_getStorageHash: async p => {
      const v = await storageAt(c, hexParam(p[0], 'storage key'), optHash(p[1]))
      return v === null ? null : u8aToHex(blake2AsU8a(hexToU8a(v)))
    },
    state_getStorageSize: async p => {
      const v = await storageAt(c, hexParam(p[0], 'storage key'), optHash(p[1]))
      return v === null ? null : (v.length - 2) / 2
    },
    state_queryStorageAt: async p => {
      if (!Array.isArray(p[0]) || p[0].length > MAX_KEYS) throw invalidParams(`keys must be an array of at most ${MAX_KEYS}`)
      const keys = p[0].map((k, i) => hexParam(k, `key ${i}`))
      const at = blockAt(c, optHash(p[1]))
      const changes: Array<[string, string | null]> = []
      for (const k of keys) changes.push([k, await storageAt(c, k, at.hash)])
      return [{ block: at.hash, changes }]
    },
    state_getKeysPaged: async p => {
      const prefix = p[0] === null || p[0] === undefined ? '0x' : hexParam(p[0], 'prefix')
      const count = p[1]
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > MAX_KEYS) throw invalidParams(`count must be an integer in [0, ${MAX_KEYS}]`)
      const start = p[2] === null || p[2] === undefined ? undefined : hexParam(p[2], 'start key')
      const keys = await keysAt(c, prefix, optHash(p[3]))
      return keys.filter(k => start === undefined || k > start).slice(0, count)
    },
    state_getKeys: async p => (await keysAt(c, hexParam(p[0], 'prefix'), optHash(p[1]))).slice(0, MAX_KEYS * 10),
    state_subscribeStorage: (p, conn) => {
      const raw = p[0]
      if (raw !== undefined && raw !== null && (!Array.isArray(raw) || raw.length > MAX_KEYS)) throw invalidParams('keys must be an array')
      const keys = raw === undefined || raw === null ? undefined : (raw as unknown[]).map((k, i) => hexParam(k, `key ${i}`))
      return subs.subscribe(conn, 'state_storage', emit => {
        const value = (k: string): string | null => { const v = c.state.get(k); return v === undefined ? null : u8aToHex(v) }
        if (keys !== undefined) emit({ block: c.head.hash, changes: keys.map(k => [k, value(k)]) })
        const f = (b: StoredBlock, changed: string[]): void => {
          const hit = keys === undefined ? changed : keys.filter(k => changed.includes(k))
          if (hit.length > 0) emit({ block: b.hash, changes: hit.map(k => [k, value(k)]) })
        }
        c.on('block', f)
        return () => c.off('block', f)
      })
    },
    state_unsubscribeStorage: (p, conn) => subs.unsubscribe(conn, p),
    state_subscribeRuntimeVersion: (_p, conn) => subs.subscribe(conn, 'state_runtimeVersion', emit => { emit(version()); return () => {} }),
    state_unsubscribeRuntimeVersion: (p, conn) => subs.unsubscribe(conn, p),
    author_submitExtrinsic: async p => (await c.submit(submitBytes(p))).hash,
    author_submitAndWatchExtrinsic: async (p, conn) => {
      // submit resolves once the transaction is in the pool; nothing runs between
      // that and the listener below, so no inBlock notification can be missed
      const tx = await c.submit(submitBytes(p))
      return subs.subscribe(conn, 'author_extrinsicUpdate', emit => {
        emit('ready')
        const ev = `tx:${tx.hash}`
        const f = (s: TxStatus): void => {
          emit(s)
          if (s === 'dropped' || s === 'invalid' || (typeof s === 'object' && 'finalized' in s)) c.off(ev, f)
        }
        c.on(ev, f)
        return () => c.off(ev, f)
      })
    },
    author_unwatchExtrinsic: (p, conn) => subs.unsubscribe(conn, p),
    author_pendingExtrinsics: () => c.pending(),
    ...(opts.unsafeRpc === true ? { engine_createBlock: (p: unknown[]) => createBlock(c, p) } : {})
  }
  // legacy names polkadot.js and other tools use
  const alias: Record<string, string> = {
    chain_subscribeNewHead: 'chain_subscribeNewHeads',
    chain_unsubscribeNewHead: 'chain_unsubscribeNewHeads',
    subscribe_newHead: 'chain_subscribeNewHeads',
    chain_getFinalisedHead: 'chain_getFinalizedHead',
    chain_subscribeFinalisedHeads: 'chain_subscribeFinalizedHeads',
    chain_unsubscribeFinalisedHeads: 'chain_unsubscribeFinalizedHeads',
    chain_getRuntimeVersion: 'state_getRuntimeVersion',
    chain_subscribeRuntimeVersion: 'state_subscribeRuntimeVersion',
    chain_unsubscribeRuntimeVersion: 'state_unsubscribeRuntimeVersion',
    state_getStorageAt: 'state_getStorage',
    state_getKeysPagedAt: 'state_getKeysPaged',
    account_nextIndex: 'system_accountNextIndex'
  }
  for (const [a, t] of Object.entries(alias)) methods[a] = methods[t]
  return methods
}

function headSub (chain: DevChain, subs: Subscriptions, conn: Conn, notify: string, event: 'block' | 'finalized', current: () => StoredBlock): string {
  return subs.subscribe(conn, notify, emit => {
    emit(current().header)
    const f = (b: StoredBlock): void => emit(b.header)
    chain.on(event, f)
    return () => chain.off(event, f)
  })
}

function submitBytes (p: Params): Uint8Array {
  const hex = hexParam(p[0], 'extrinsic')
  return hexToU8a(hex)
}

/** Manual seal (Substrate's engine_createBlock): anyone who can call it fast-forwards every deadline, hence unsafeRpc. */
function createBlock (chain: DevChain, p: unknown[]): unknown {
  const createEmpty = p[0] !== false
  const b = chain.produce({ allowEmpty: createEmpty })
  if (b === undefined) throw new RpcError(-32000, 'No transactions to include (createEmpty = false)')
  return {
    hash: b.hash, aux: { header_only: false, clear_justification_requests: false, needs_justification: false, bad_justification: false, is_new_best: true }
  }
}
