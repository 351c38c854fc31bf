import { toPlain, type Plain } from './codec.js'
import type { RuntimeTypes } from './metadata.js'
import type { CallCodec, PlainCall } from './transaction.js'

// Call indices to pallet/call names and argument names, from the metadata.

export const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

export class CallTable {
  private readonly palletIndex = new Map<string, number>()
  private readonly callNames = new Map<number, { pallet: string, name: string, args: string[] }>()

  constructor (types: RuntimeTypes) {
    for (const p of types.pallets) {
      this.palletIndex.set(p.name, p.index)
      for (const c of p.calls) this.callNames.set(p.index * 256 + c.index, { pallet: p.name, name: c.name, args: c.args.map(([n]) => camel(n as string)) })
    }
  }

  indexOf (pallet: string): number | undefined { return this.palletIndex.get(pallet) }

  /** The call as pallet/name and plain camelCase arguments. */
  plainCall (call: CallCodec): PlainCall {
    const [pi, ci] = call.callIndex
    const spec = this.callNames.get(pi * 256 + ci)
    if (spec === undefined) return { pallet: '?', name: `${pi}.${ci}`, args: {} }
    const args: Record<string, Plain> = {}
    spec.args.forEach((name, i) => { args[name] = toPlain(call.args[i]) })
    return { pallet: spec.pallet, name: spec.name, args }
  }
}
