// proofswarm dashboard page: plain browser JS, no build step; the charts are
// drawn by Chart.js (pictures.js).
// Reads /api/machines once (statechart definitions) and follows /api/events
// (server-sent events: "state" about once a second, "trace" per actor trace entry).
'use strict'

const UNIT = 10n ** 12n
const MAX_TIMELINE = 400
const $ = (sel, root = document) => root.querySelector(sel)

let charts = {}
let lastState = null
let lastStateAt = 0
const timeline = [] // newest last
const timelineKeys = new Set()
const lastTransition = new Map() // `${peerName}/${actorId}` → { from, to }
const actorCards = new Map() // `${peerName}/${actorId}` → { el, svg }

// ---------- helpers ----------
function el (tag, attrs = {}, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue
    if (k === 'class') e.className = v
    else if (k === 'text') e.textContent = v
    else e.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) if (c != null) e.append(c instanceof Node ? c : document.createTextNode(String(c)))
  return e
}
const svgEl = (tag, attrs = {}) => {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag)
  for (const [k, v] of Object.entries(attrs)) if (v != null) e.setAttribute(k, String(v))
  return e
}
const short = (s, n = 10) => s == null ? '–' : (s.length > n + 4 ? `${s.slice(0, n)}…${s.slice(-4)}` : s)
function units (v) {
  if (v == null) return '–'
  try {
    const b = BigInt(v)
    const whole = b / UNIT
    const frac = ((b % UNIT) * 100n / UNIT).toString().padStart(2, '0')
    return `${whole.toLocaleString('en-US')}.${frac}`
  } catch { return String(v) }
}
// a state value as comma-separated full leaf paths (as actors/trace.ts stateString)
function stateText (v) {
  const out = []
  const join = (p, k) => p === '' ? k : `${p}.${k}`
  const walk = (x, p) => {
    if (x == null || typeof x !== 'object') { out.push(join(p, String(x))); return }
    const e = Object.entries(x)
    if (e.length === 0) { if (p !== '') out.push(p); return }
    for (const [k, y] of e) walk(y, join(p, k))
  }
  walk(v, '')
  return out.join(',')
}
const roleOf = (actorId) => actorId === 'supervisor' ? 'supervisor' : actorId.split('#')[0]
const time = (t) => new Date(t).toLocaleTimeString('en-GB', { hour12: false }) + '.' + String(t % 1000).padStart(3, '0')
function peerNameOf (peerId) {
  const p = lastState?.peers.find(x => x.status?.peerId === peerId)
  return p != null ? p.name : short(peerId, 8)
}
function accountName (hex) {
  if (hex == null) return '–'
  const a = lastState?.chain.accounts.find(x => x.accountId === hex)
  return a != null ? a.name : short(hex, 8)
}
// event fields: accounts by name, peer ids decoded, amounts in units, long hashes shortened
function fmtData (data) {
  if (data == null) return ''
  return Object.entries(data).map(([k, v]) => {
    let x = typeof v === 'object' ? JSON.stringify(v) : String(v)
    if (typeof v === 'string' && /^0x[0-9a-f]{64}$/i.test(v)) x = lastState?.chain.accounts.some(a => a.accountId === v) ? accountName(v) : short(v, 8)
    else if (k === 'peerId' && typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v)) x = short(hexUtf8(v), 10)
    else if (/^\d{10,}$/.test(x) && !/Id$/.test(k)) x = units(x)
    else if (typeof v === 'string' && v.length > 40) x = short(v, 12)
    return `${k}=${x}`
  }).join(' ')
}
function hexUtf8 (hex) {
  try { return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(hex.slice(2).match(/../g).map(b => parseInt(b, 16)))) } catch { return hex }
}
function rolePill (r, extra = '') { return el('span', { class: `role ${r} ${extra}`, 'data-role': r, text: r }) }
function replaceChildren (node, ...kids) { node.replaceChildren(...kids.flat().filter(k => k != null)) }

// ---------- statechart layout (SVG) ----------
// Columns by distance from the initial state; back edges arc below the boxes.
function drawChart (chart) {
  const states = chart.states
  const layer = new Map()
  if (chart.initial != null) layer.set(chart.initial, 0)
  const queue = chart.initial != null ? [chart.initial] : []
  while (queue.length > 0) {
    const s = queue.shift()
    for (const t of chart.transitions) {
      if (t.to == null || t.to === s) continue
      if (t.from === s && !layer.has(t.to)) { layer.set(t.to, layer.get(s) + 1); queue.push(t.to) }
    }
  }
  let maxLayer = Math.max(0, ...layer.values())
  for (const s of states) if (!layer.has(s.path)) layer.set(s.path, ++maxLayer)
  const cols = []
  for (const s of states) (cols[layer.get(s.path)] ??= []).push(s)
  const boxH = 34; const gapX = 70; const gapY = 16; const pad = 10
  const pos = new Map()
  let x = pad
  let maxY = 0
  for (const col of cols) {
    if (col == null) continue
    const w = Math.max(...col.map(s => Math.max(s.key.length * 7, (s.invoke.join(',').length + 2) * 5.5) + 18))
    col.forEach((s, i) => {
      const y = pad + i * (boxH + gapY) + (col.length === 1 ? 10 : 0)
      pos.set(s.path, { x, y, w, h: boxH })
      maxY = Math.max(maxY, y + boxH)
    })
    x += w + gapX
  }
  const width = x - gapX + pad
  // one drawn edge per (from, to) pair, its label listing every event that takes it
  const pairs = new Map()
  for (const t of chart.transitions) {
    if (t.to == null || t.from === '' || t.from === t.to || !pos.has(t.from) || !pos.has(t.to)) continue
    const k = `${t.from}>${t.to}`
    if (!pairs.has(k)) pairs.set(k, { from: t.from, to: t.to, all: [] })
    pairs.get(k).all.push(t)
  }
  const edges = [...pairs.values()]
  const backCount = edges.filter(t => layer.get(t.to) <= layer.get(t.from)).length
  const height = maxY + pad + (backCount > 0 ? 22 + backCount * 9 : 0) + 4
  const svg = svgEl('svg', { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${chart.id} statechart` })
  const defs = svgEl('defs')
  const marker = svgEl('marker', { id: `arrow-${chart.id}`, viewBox: '0 0 8 8', refX: 7, refY: 4, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' })
  marker.append(svgEl('path', { d: 'M0,0 L8,4 L0,8 z', fill: '#a0aec0' }))
  defs.append(marker)
  svg.append(defs)
  let back = 0
  for (const t of edges) {
    const a = pos.get(t.from); const b = pos.get(t.to)
    const g = svgEl('g', { class: 'edge', 'data-from': t.from, 'data-to': t.to })
    const labels = [...new Set(t.all.map(labelOf))]
    const label = labels.length > 2 ? `${labels[0]} +${labels.length - 1}` : labels.join(' / ')
    let d; let lx; let ly
    if (layer.get(t.to) > layer.get(t.from)) {
      const x1 = a.x + a.w; const y1 = a.y + a.h / 2; const x2 = b.x; const y2 = b.y + b.h / 2
      d = `M${x1},${y1} C${x1 + gapX / 2},${y1} ${x2 - gapX / 2},${y2} ${x2},${y2}`
      lx = (x1 + x2) / 2; ly = (y1 + y2) / 2 - 3
    } else {
      back++
      const x1 = a.x + a.w / 2 + 6; const x2 = b.x + b.w / 2 - 6
      const y1 = a.y + a.h; const y2 = b.y + b.h
      const low = maxY + 8 + back * 9
      d = `M${x1},${y1} C${x1},${low} ${x2},${low} ${x2},${y2}`
      // labels of nested arcs would pile up in the middle: put each near its source
      lx = x1 + (x2 - x1) * 0.3; ly = low - 2
    }
    g.append(svgEl('path', { d, 'marker-end': `url(#arrow-${chart.id})` }))
    const text = svgEl('text', { x: lx, y: ly, 'text-anchor': 'middle' })
    text.textContent = label
    const title = svgEl('title'); title.textContent = t.all.map(x => `${x.event || '(always)'}${x.guard ? ` [${x.guard}]` : ''}: ${x.from} → ${x.to}`).join('\n')
    g.append(text, title)
    svg.append(g)
  }
  for (const s of states) {
    const p = pos.get(s.path)
    const g = svgEl('g', { class: `state ${s.type} ${s.path === chart.initial ? 'initial' : ''}`, 'data-state': s.path, transform: `translate(${p.x},${p.y})` })
    g.append(svgEl('rect', { width: p.w, height: p.h, rx: 7 }))
    const name = svgEl('text', { x: p.w / 2, y: s.invoke.length > 0 ? 14 : 21, 'text-anchor': 'middle' })
    name.textContent = s.key
    g.append(name)
    if (s.invoke.length > 0) {
      const inv = svgEl('text', { class: 'inv', x: p.w / 2, y: 27, 'text-anchor': 'middle' })
      inv.textContent = `⟳ ${s.invoke.join(', ')}`
      g.append(inv)
    }
    const onSelf = chart.transitions.filter(t => t.from === s.path && (t.to == null || t.to === s.path)).map(labelOf)
    const title = svgEl('title'); title.textContent = `${s.path} (${s.type})${onSelf.length > 0 ? `\nhandles: ${onSelf.join(', ')}` : ''}`
    g.append(title)
    svg.append(g)
  }
  return svg
}
function labelOf (t) {
  let e = t.event === '' ? (t.guard ? `[${t.guard}]` : 'always') : t.event
  if (e.startsWith('chain.') || e.startsWith('gossip.') || e.startsWith('dispute.')) e = e.slice(e.indexOf('.') + 1)
  return e.length > 22 ? e.slice(0, 21) + '…' : e
}
function highlight (svg, value, last) {
  const active = new Set()
  for (const part of stateText(value).split(',')) {
    const segs = part.split('.')
    for (let i = 1; i <= segs.length; i++) active.add(segs.slice(0, i).join('.'))
  }
  for (const g of svg.querySelectorAll('g.state')) g.classList.toggle('current', active.has(g.dataset.state))
  for (const g of svg.querySelectorAll('g.edge')) g.classList.toggle('last', last != null && g.dataset.from === last.from && g.dataset.to === last.to)
}

// ---------- sections ----------
function renderPeers (s) {
  const tbody = $('#peers tbody')
  const rows = s.peers.map(p => {
    const st = p.status
    const roles = p.roles?.roles ?? st?.roles ?? []
    const retiring = (p.roles?.retiring ?? []).map(roleOf)
    const acct = st != null ? s.chain.accounts.find(a => a.node?.peerId === st.peerId) : undefined
    const mesh = (st?.topics ?? []).map(t => `${t.topic.split('/').slice(-2, -1)[0] ?? t.topic}: ${t.meshPeers}/${t.subscribers}`).join(' · ')
    return el('tr', { 'data-peer': p.name, class: p.connected ? '' : 'offline' },
      el('td', {}, el('b', { text: p.name })),
      el('td', { class: 'mono', title: st?.peerId ?? '' }, short(st?.peerId, 12)),
      el('td', { class: 'roles' }, st?.kind === 'bootstrap' ? rolePill('bootstrap') : null, roles.map(r => rolePill(r)), retiring.map(r => rolePill(r, 'retiring'))),
      el('td', { 'data-testid': 'connected-count' }, st != null ? String(st.connectedPeers.length) : '–'),
      el('td', {}, st != null ? String(st.dhtRoutingTableSize) : '–'),
      el('td', { class: 'small' }, mesh || '–'),
      el('td', { class: 'small' }, acct != null ? `${acct.name} · ${units(acct.node.stake)}` : (s.chain.state === 'connected' ? 'not registered' : '–')),
      el('td', {}, st != null ? `${Math.round(st.uptimeSeconds)} s` : '–'),
      el('td', {}, p.connected
        ? el('span', { class: 'pill ok', text: p.traceStream === 'live' ? 'up · traces live' : 'up' })
        : el('span', { class: 'pill down', title: p.error ?? '', text: 'not connected' }))
    )
  })
  replaceChildren(tbody, rows)
  const sel = $('#trace-peer')
  const have = new Set([...sel.options].map(o => o.value))
  for (const p of s.peers) if (p.status?.peerId != null && !have.has(p.status.peerId)) sel.append(el('option', { value: p.status.peerId, text: p.name }))
}

function renderTasks (s) {
  const box = $('#tasks')
  if (s.tasks.length === 0) { replaceChildren(box, el('p', { class: 'empty', text: s.chain.state === 'connected' ? 'no tasks on chain yet' : 'no tasks seen yet (no chain: phases are inferred from the actors)' })); return }
  const head = el('tr', {}, ['task', 'phase', 'submitter', 'solver', 'steps', 'verdicts', 'disputes', 'challenge end', 'actors working on it'].map(h => el('th', { text: h })))
  const rows = s.tasks.map(t => {
    const c = t.chain
    const verdicts = c != null ? `${c.verdicts.filter(v => v.accept && !v.void).length} accept / ${c.verdicts.filter(v => !v.accept && !v.void).length} reject` : '–'
    return el('tr', { 'data-task': t.id },
      el('td', {}, el('b', { text: `#${t.id}` })),
      el('td', {}, el('span', { class: `phase ${t.phase}`, 'data-testid': 'task-phase', text: t.phase }), t.phaseSource !== 'chain' ? el('span', { class: 'muted small', text: t.phaseSource === 'actors' ? ' (from actors)' : ` (chain via ${t.phaseSource.slice(5)})` }) : null),
      el('td', {}, c != null ? accountName(c.submitter) : '–'),
      el('td', {}, c != null ? accountName(c.solver) : '–'),
      el('td', {}, c != null ? `${c.stepCount}/${c.steps}` : '–'),
      el('td', {}, verdicts),
      el('td', {}, c != null ? String(c.openDisputes) : '–'),
      el('td', {}, c != null && c.challengeEnd > 0 ? `block ${c.challengeEnd}` : '–'),
      el('td', { class: 'small' }, t.workers.map(w => `${w.peer}:${w.actorId} ${w.relation}${w.relation === 'working' ? ` (${w.state})` : ''}`).join('; ') || '–')
    )
  })
  // pictures of the newest tasks: loss curve, which steps were checked, the result
  const pics = s.tasks.slice(0, 3).map(t => {
    const p = t.pictures
    if (p == null) return null
    const text = p.result?.text
    return el('div', { class: 'task-pictures', 'data-task-pictures': t.id },
      el('h4', {}, `task #${t.id}`, el('span', { class: 'muted small', text: p.curve != null ? ` training loss (${p.curve.peer}, ${p.curve.phase})` : '' }),
        p.result?.accuracy != null ? el('span', { class: 'small', 'data-testid': 'task-accuracy', text: ` test accuracy ${(p.result.accuracy * 100).toFixed(2)}%` }) : null),
      el('div', { class: 'pictures-row' },
        el('figure', {}, window.pictures.lossCurve(`loss/${t.id}`, p), el('figcaption', { class: 'small muted', text: 'training loss by step, live while the solver trains' + (text != null ? '; dashed: held-out loss and unigram baseline' : '') + (p.result?.accuracy != null ? '; diamond: test accuracy' : '') })),
        el('figure', {}, window.pictures.sampleMap(`samples/${t.id}`, p), el('figcaption', { class: 'small muted', text: 'steps checked: one row per verdict (green accept, red reject), whistleblowers replay every step; ticks: checkpoints; red line: disputed step (red box: the disputed segment, at a root every m > 1 steps)' }))),
      text != null ? window.pictures.textResult(text) : null)
  })
  replaceChildren(box, el('table', {}, el('thead', {}, head), el('tbody', {}, rows)), pics)
}

function renderDisputes (s) {
  const box = $('#disputes')
  if (s.disputes.length === 0) { replaceChildren(box, el('p', { class: 'empty', text: 'no disputes' })); return }
  replaceChildren(box, s.disputes.map(d => {
    const c = d.chain
    const head = el('h4', {},
      el('b', { text: /^\d+$/.test(d.id) ? `dispute #${d.id}` : d.id }),
      d.taskId != null ? el('span', { text: `task #${d.taskId}` }) : null,
      el('span', { class: `phase ${d.status}`, 'data-testid': 'dispute-status', text: d.status }),
      d.verdict != null ? el('span', { class: 'verdict', 'data-testid': 'dispute-verdict', text: `verdict: ${d.verdict}${d.winner != null ? ` (winner ${accountName(d.winner)}${d.how != null ? `, by ${d.how}` : ''}${d.slashed != null && d.slashed !== '0' ? `, ${units(d.slashed)} slashed` : ''})` : ''}` }) : null,
      c != null ? el('span', { class: 'muted', text: `${c.kind}: ${accountName(c.challenger)} challenges ${accountName(c.defender)} at step ${c.disputedStep}, bond ${units(c.bond)}` }) : null
    )
    const clocks = c != null
      ? el('div', { class: 'clocks' }, `messages on chain ${c.moves} · ${c.force != null ? `forced: ${c.force.to} owes message ${c.force.seq} by block ${c.force.due}` : 'no force pending'} · deadline block ${c.deadline} · opened at block ${c.openedAt}`)
      : el('div', { class: 'clocks', text: 'no chain record (yet): rounds from events and actor traces' })
    const list = d.rounds.length > 0
      ? el('ol', {}, d.rounds.slice(-60).map(r => el('li', {},
        r.source === 'chain' ? `block ${r.blockNumber}: ${r.event.replace(/^arbitration\./, '')}` : r.source === 'gossip' ? `gossip (heard by ${r.peer}): ${r.event.slice(7)}` : `${time(r.time)} ${peerNameOf(r.peer)}/${r.actorId}: ${r.event}`,
        r.detail != null ? el('span', { class: 'muted', text: ` ${fmtData(r.detail)}` }) : null)))
      : el('p', { class: 'empty', text: 'no rounds yet' })
    // the narrowing when the challenger reported it; the raw rounds folded away
    const playing = d.status === 'Open'
    const claim = d.claim != null ? el('div', { class: 'small claim', 'data-testid': 'bisection-claim', text: `on chain: ${d.claim.kind} claim — ${d.claim.reason}` }) : null
    const narrowing = d.narrowing != null && d.narrowing.length > 0
      ? el('figure', { 'data-testid': playing ? 'bisection-live' : 'bisection-done' }, window.pictures.bisectionView(`bisection/${d.id}`, d),
        el('figcaption', { class: 'small muted', text: `${playing ? 'narrowing now' : 'how the bisection narrowed'} (${d.narrowing.length} answer${d.narrowing.length === 1 ? '' : 's'} of the defender, as ${d.narrowedBy} recorded them): step → ops of its trace → one op → tensor → rows → element; the filled part is still in dispute after each answer` }),
        claim)
      : claim
    const rounds = narrowing != null ? el('details', {}, el('summary', { class: 'small muted', text: `${d.rounds.length} events and trace entries` }), list) : list
    return el('div', { class: 'dispute', 'data-dispute': d.id }, head, clocks, narrowing, rounds)
  }))
}

function actorContextLine (ctx) {
  if (ctx == null) return null
  const parts = []
  const ids = (v) => v.every(q => typeof q !== 'object' || (q != null && 'taskId' in q))
    ? v.map(q => typeof q === 'object' ? `#${q.taskId}` : `#${q}`).join(' ')
    : `${v.length} item(s)`
  if (ctx.current != null) parts.push(`task #${ctx.current}`)
  if (Array.isArray(ctx.queue) && ctx.queue.length > 0) parts.push(`queue ${ids(ctx.queue)}`)
  if (Array.isArray(ctx.history) && ctx.history.length > 0) parts.push(`done ${ctx.history.slice(-4).map(h => `#${h.taskId} ${h.outcome}`).join(', ')}`)
  if (ctx.draining === true) parts.push('draining')
  // role-specific fields (open/settled tasks, pending re-checks, a verdict, ...): shown compactly
  for (const [k, v] of Object.entries(ctx)) {
    if (['current', 'queue', 'history', 'draining', 'error'].includes(k) || v == null) continue
    if (Array.isArray(v)) { if (v.length > 0) parts.push(`${k} ${v.length <= 8 ? ids(v) : `${v.length} items`}`) } else if (typeof v === 'object') {
      const j = JSON.stringify(v)
      if (j !== '{}') parts.push(`${k} ${j.length > 80 ? j.slice(0, 79) + '…' : j}`)
    } else parts.push(`${k} ${String(v).slice(0, 60)}`)
  }
  const out = el('div', { class: 'ctx' }, parts.join(' · ') || 'idle, nothing queued')
  if (ctx.error != null) out.append(el('div', { class: 'err', text: `error: ${ctx.error}` }))
  return out
}

function renderActors (s) {
  const root = $('#actors')
  const seen = new Set()
  for (const p of s.peers) {
    const groupId = `peer-${p.name}`
    let group = root.querySelector(`[data-peer-actors="${CSS.escape(p.name)}"]`)
    if (group == null) {
      group = el('div', { class: 'peer-actors', 'data-peer-actors': p.name, id: groupId }, el('h3', {}), el('div', { class: 'actor-cards' }))
      root.append(group)
    }
    const h3 = group.querySelector('h3')
    const list = []
    if (p.actors != null) {
      list.push({ id: 'supervisor', state: p.actors.supervisor.state, status: 'active', context: { roles: p.actors.supervisor.roles } })
      for (const a of p.actors.actors) list.push(a)
    }
    h3.textContent = `${p.name}${p.connected ? '' : ' — not connected'}${p.connected && p.actors == null ? ' — no role actors (bootstrap peer)' : ''}`
    const cards = group.querySelector('.actor-cards')
    const retiring = new Set(p.roles?.retiring ?? [])
    for (const a of list) {
      const key = `${p.name}/${a.id}`
      seen.add(key)
      const role = roleOf(a.id)
      let card = actorCards.get(key)
      if (card == null) {
        const chart = charts[role]
        const svg = chart != null ? drawChart(chart) : null
        const elc = el('div', { class: 'actor', 'data-actor': a.id, 'data-peer': p.name },
          el('h4', {}, el('b', { text: a.id }), el('span', { class: 'state-name mono', 'data-testid': 'actor-state' }), el('span', { class: 'muted small status' })),
          svg ?? el('p', { class: 'empty', text: `no chart for role ${role}` }),
          el('div', { class: 'ctxbox' }))
        cards.append(elc)
        card = { el: elc, svg }
        actorCards.set(key, card)
      }
      const st = stateText(a.state)
      card.el.querySelector('.state-name').textContent = st
      card.el.querySelector('.status').textContent = a.status !== 'active' ? a.status : (retiring.has(a.id) ? 'retiring (finishing in-flight work)' : '')
      card.el.classList.toggle('retiring', retiring.has(a.id))
      if (card.svg != null) highlight(card.svg, a.state, lastTransition.get(key))
      const ctxLine = a.id === 'supervisor'
        ? el('div', { class: 'ctx' }, `roles: ${(a.context.roles ?? []).join(', ') || '(none)'}`)
        : actorContextLine(a.context)
      replaceChildren(card.el.querySelector('.ctxbox'), ctxLine)
    }
  }
  for (const [key, card] of actorCards) {
    if (!seen.has(key)) { card.el.remove(); actorCards.delete(key) }
  }
}

function renderChain (s) {
  const c = s.chain
  const pill = $('#chain-status')
  pill.className = `pill ${c.state}`
  pill.textContent = c.state === 'none' ? 'no chain' : c.state === 'connected' ? `chain: connected · block ${c.bestBlock}` : c.state === 'connecting' ? 'chain: connecting…' : 'chain: not connected'
  pill.title = c.error ?? c.url ?? ''
  $('#chain-block').textContent = c.url != null ? `${c.url}${c.bestBlock != null ? ` · best block ${c.bestBlock}` : ''}` : ''
  const box = $('#chain')
  if (c.state === 'none') { replaceChildren(box, el('p', { class: 'empty', text: 'no chain: this dashboard was started without a chain URL' })); return }
  if (c.state !== 'connected' && c.accounts.length === 0) { replaceChildren(box, el('p', { class: 'empty', text: `chain not connected${c.error ? `: ${c.error}` : ''} (retrying)` })); return }
  const accounts = [...c.accounts].sort((a, b) => (b.node != null) - (a.node != null))
  const peerOf = (pid) => s.peers.find(p => p.status?.peerId === pid)?.name ?? short(pid, 8)
  const acctTable = el('table', {},
    el('thead', {}, el('tr', {}, ['account', 'address', 'free', 'reserved', 'stake', 'roles', 'peer', 'active tasks'].map(h => el('th', { text: h })))),
    el('tbody', {}, accounts.map(a => el('tr', { 'data-account': a.name, class: a.node == null ? 'offline' : '' },
      el('td', {}, el('b', { text: a.name })),
      el('td', { class: 'mono', title: a.address }, short(a.address, 8)),
      el('td', {}, units(a.free)),
      el('td', {}, units(a.reserved)),
      el('td', {}, a.node != null ? units(a.node.stake) : '–'),
      el('td', {}, a.node != null ? rolesOfMask(a.node.roles).map(r => rolePill(r)) : '–'),
      el('td', {}, a.node != null ? peerOf(a.node.peerId) : '–'),
      el('td', {}, a.node != null ? String(a.node.activeTasks) : '–')))))
  const events = el('ol', { class: 'small', reversed: true }, c.events.slice(-25).reverse().map(e => el('li', {}, `block ${e.blockNumber}: ${e.method} `, el('span', { class: 'muted', text: fmtData(e.data) }))))
  replaceChildren(box, c.state !== 'connected' ? el('p', { class: 'empty', text: `chain not connected: ${c.error ?? ''} (showing last known values)` }) : null,
    el('div', { class: 'grid2' }, acctTable, el('div', {}, el('b', { class: 'small', text: 'latest arbitration events' }), c.events.length > 0 ? events : el('p', { class: 'empty', text: 'none yet' }))))
}
// the balance history: whole in the first state, then one "balance" event per new sample (thinned as the server does)
let balanceHistory = []
const MAX_BALANCE_SAMPLES = 400
function addBalanceSample (sample) {
  if (balanceHistory.length > 0 && balanceHistory[balanceHistory.length - 1].block >= sample.block) return
  balanceHistory.push(sample)
  if (balanceHistory.length > MAX_BALANCE_SAMPLES) {
    const half = Math.floor(balanceHistory.length / 2)
    balanceHistory = balanceHistory.filter((_, i) => i >= half || i % 2 === 0)
  }
  if (lastState != null) renderBalances(lastState)
}
function renderBalances (s) {
  const box = $('#balances')
  const h = balanceHistory
  if (s.chain.state === 'none') { replaceChildren(box, el('p', { class: 'empty', text: 'no chain: this dashboard was started without a chain URL' })); return }
  replaceChildren(box, el('div', { class: 'pictures-row' }, window.pictures.balanceCharts('balances', h).map((c, i) =>
    el('figure', {}, c, el('figcaption', { class: 'small muted', text: i === 0 ? 'free balance of each account that moved' : 'reserved funds (stake, bonds, escrow) solid; registered stake dashed' })))))
}
function rolesOfMask (m) {
  return [[1, 'submitter'], [2, 'solver'], [4, 'verifier'], [8, 'whistleblower']].filter(([b]) => (m & b) !== 0).map(([, r]) => r)
}

// ---------- timeline ----------
const traceKey = (e) => `${e.peer}/${e.time}/${e.seq}/${e.actorId}`
function addTrace (e, fresh) {
  const k = traceKey(e)
  if (timelineKeys.has(k)) return false
  timelineKeys.add(k)
  timeline.push(e)
  if (timeline.length > MAX_TIMELINE) timelineKeys.delete(traceKey(timeline.shift()))
  if (e.kind === 'transition' && e.from != null && e.to != null) {
    const key = `${peerNameOf(e.peer)}/${e.actorId}`
    lastTransition.set(key, { from: e.from, to: e.to })
    const card = actorCards.get(key)
    if (card?.svg != null) highlight(card.svg, e.to, lastTransition.get(key))
  }
  if (fresh) prependRow(e)
  return true
}
function traceVisible (e) {
  const peer = $('#trace-peer').value
  if (peer !== '' && e.peer !== peer) return false
  if ($('#trace-hide-init').checked && (e.kind === 'spawned' || e.event === 'xstate.init')) return false
  return true
}
function traceRow (e, isNew) {
  return el('tr', { class: `${e.kind}${isNew ? ' new' : ''}`, 'data-actor': e.actorId },
    el('td', { class: 'mono' }, time(e.time)),
    el('td', {}, peerNameOf(e.peer)),
    el('td', { class: 'mono' }, e.actorId),
    el('td', { class: 'ev mono', title: e.event }, e.event.replace(/^xstate\.(done|error)\.actor\.\S*\.([^.]+)$/, '$1: $2')),
    el('td', { class: 'mono' }, e.kind === 'transition' ? `${e.from ?? '∅'} → ${e.to}` : e.kind === 'event' ? `(${e.to ?? ''})` : e.kind),
    el('td', { class: 'detail mono' }, e.detail != null ? JSON.stringify(e.detail) : ''))
}
function prependRow (e) {
  if (!traceVisible(e)) return
  const tbody = $('#timeline tbody')
  tbody.prepend(traceRow(e, true))
  while (tbody.rows.length > 300) tbody.deleteRow(-1)
}
function renderTimeline () {
  const rows = []
  for (let i = timeline.length - 1; i >= 0 && rows.length < 300; i--) if (traceVisible(timeline[i])) rows.push(traceRow(timeline[i], false))
  replaceChildren($('#timeline tbody'), rows)
}

// ---------- wiring ----------
function render (s) {
  lastState = s
  lastStateAt = Date.now()
  if (Array.isArray(s.chain.history)) balanceHistory = s.chain.history.slice()
  let seeded = false
  for (const e of s.traces) seeded = addTrace(e, false) || seeded
  window.pictures.beginFrame()
  renderPeers(s)
  renderTasks(s)
  renderDisputes(s)
  renderActors(s)
  renderChain(s)
  renderBalances(s)
  window.pictures.endFrame()
  if (seeded) renderTimeline()
  const up = s.peers.filter(p => p.connected).length
  $('#summary').textContent = `${up}/${s.peers.length} peers up · ${s.tasks.length} task(s) · ${s.disputes.length} dispute(s)`
  setLive(true)
}
function setLive (ok, why) {
  const live = $('#live')
  live.className = `pill ${ok ? 'live' : 'down'}`
  live.textContent = ok ? 'live' : `dashboard server not connected${why ? ` (${why})` : ''} — retrying`
}

async function main () {
  try {
    charts = await (await fetch('/api/machines')).json()
  } catch (err) { setLive(false, 'cannot load the statecharts') }
  const es = new EventSource('/api/events')
  es.addEventListener('state', (ev) => { try { render(JSON.parse(ev.data)) } catch (err) { console.error(err) } })
  es.addEventListener('trace', (ev) => { try { addTrace(JSON.parse(ev.data), true) } catch (err) { console.error(err) } })
  es.addEventListener('balance', (ev) => { try { addBalanceSample(JSON.parse(ev.data)) } catch (err) { console.error(err) } })
  es.onerror = () => setLive(false)
  setInterval(() => { if (lastStateAt > 0 && Date.now() - lastStateAt > 5000) setLive(false, 'no update for 5 s') }, 1000)
  $('#trace-peer').addEventListener('change', renderTimeline)
  $('#trace-hide-init').addEventListener('change', renderTimeline)
}
void main()
