// A tiny type language for the declarative pallet description, compiled into
// the portable type registry (scale-info) that metadata V14 carries.
//
// Type expressions are strings: primitives (u8 u16 u32 u64 u128 bool str),
// `Vec<T>`, `Option<T>`, `Compact<T>`, `[T; N]`, tuples `(A, B)` / `()`, and
// names of composite or variant types declared in a `NamedTypes` table.

export type Fields = Array<[name: string | null, type: string]>

export type NamedType =
  | { path: string[], params?: Array<[string, string]>, fields: Fields, docs?: string[] }
  | { path: string[], params?: Array<[string, string]>, variants: Array<{ name: string, index?: number, fields?: Fields, docs?: string[] }>, docs?: string[] }

export type NamedTypes = Record<string, NamedType>

export interface PortableType {
  id: number
  type: {
    path: string[]
    params: Array<{ name: string, type: number | null }>
    def: Record<string, unknown>
    docs: string[]
  }
}

const PRIMITIVES: Record<string, string> = {
  bool: 'Bool', str: 'Str', u8: 'U8', u16: 'U16', u32: 'U32', u64: 'U64', u128: 'U128', i32: 'I32', i64: 'I64'
}

/** Splits a comma-separated list at top level (ignores commas inside <> () []). */
function splitTop (s: string): string[] {
  const out: string[] = []
  let depth = 0
  let cur = ''
  for (const ch of s) {
    if (ch === '<' || ch === '(' || ch === '[') depth++
    if (ch === '>' || ch === ')' || ch === ']') depth--
    if (ch === ',' && depth === 0) { out.push(cur.trim()); cur = '' } else cur += ch
  }
  if (cur.trim() !== '') out.push(cur.trim())
  return out
}

/** Assigns portable type ids to type expressions, deduplicating by expression. */
export class TypeBuilder {
  readonly types: PortableType[] = []
  private readonly ids = new Map<string, number>()

  constructor (private readonly named: NamedTypes) {}

  id (expr: string): number {
    const e = expr.replace(/\s+/g, ' ').trim()
    const known = this.ids.get(e)
    if (known !== undefined) return known
    const id = this.types.length
    // reserve the slot first so recursive references resolve
    const slot: PortableType = { id, type: { path: [], params: [], def: {}, docs: [] } }
    this.types.push(slot)
    this.ids.set(e, id)
    this.fill(slot, e)
    return id
  }

  private fill (slot: PortableType, e: string): void {
    const t = slot.type
    if (PRIMITIVES[e] !== undefined) { t.def = { Primitive: PRIMITIVES[e] }; return }
    let m = /^(Vec|Option|Compact)<(.+)>$/.exec(e)
    if (m !== null) {
      const inner = this.id(m[2])
      if (m[1] === 'Vec') t.def = { Sequence: { type: inner } }
      else if (m[1] === 'Compact') t.def = { Compact: { type: inner } }
      else {
        t.path = ['Option']
        t.params = [{ name: 'T', type: inner }]
        t.def = { Variant: { variants: [{ name: 'None', fields: [], index: 0, docs: [] }, { name: 'Some', fields: [{ name: null, type: inner, typeName: null, docs: [] }], index: 1, docs: [] }] } }
      }
      return
    }
    m = /^\[(.+);\s*(\d+)\]$/.exec(e)
    if (m !== null) { t.def = { Array: { len: Number(m[2]), type: this.id(m[1]) } }; return }
    m = /^\((.*)\)$/.exec(e)
    if (m !== null) { t.def = { Tuple: splitTop(m[1]).map(x => this.id(x)) }; return }
    const n = this.named[e]
    if (n === undefined) throw new Error(`unknown type expression "${e}"`)
    t.path = n.path
    t.docs = n.docs ?? []
    t.params = (n.params ?? []).map(([name, ty]) => ({ name, type: this.id(ty) }))
    const fields = (fs: Fields | undefined): unknown[] => (fs ?? []).map(([name, ty]) => ({ name, type: this.id(ty), typeName: ty, docs: [] }))
    if ('fields' in n) t.def = { Composite: { fields: fields(n.fields) } }
    else t.def = { Variant: { variants: n.variants.map((v, i) => ({ name: v.name, fields: fields(v.fields), index: v.index ?? i, docs: v.docs ?? [] })) } }
  }
}
