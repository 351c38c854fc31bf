// proofswarm dashboard pictures: plain SVG drawn from the state the server
// sends (devnet/dashboard/aggregator.ts TaskPictures, DisputeRow.narrowing).
// Loaded before app.js, which calls lossCurve, sampleMap, bisectionView and
// textResult. No dependencies.
'use strict'

const NS = 'http://www.w3.org/2000/svg'
function svgNode (tag, attrs = {}, text) {
  const e = document.createElementNS(NS, tag)
  for (const [k, v] of Object.entries(attrs)) if (v != null) e.setAttribute(k, String(v))
  if (text != null) e.textContent = text
  return e
}
function titled (node, text) { node.append(svgNode('title', {}, text)); return node }

// round numbers for an axis from lo to hi
function ticks (lo, hi, n = 5) {
  if (!(hi > lo)) return [lo]
  const raw = (hi - lo) / n
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw) ?? 10 * mag
  const out = []
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toFixed(10)))
  return out
}
const fmt = (v) => Math.abs(v) >= 100 ? String(Math.round(v)) : Number(v.toPrecision(3)).toString()

/**
 * The training loss by step (the solver's progress reports), with the
 * held-out loss and the corpus's unigram baseline of a text model when known.
 */
function lossCurve (pic) {
  const c = pic.curve
  const W = 420; const H = 170; const L = 44; const R = 10; const T = 12; const B = 28
  const svg = svgNode('svg', { class: 'picture loss-curve', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'training loss by step', 'data-testid': 'loss-curve', 'data-points': c?.points.length ?? 0 })
  if (c == null || c.points.length === 0) {
    svg.append(svgNode('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, 'no loss reported yet'))
    return svg
  }
  const text = pic.result?.text
  const xs = c.points.map(p => p[0]); const ys = c.points.map(p => p[1])
  const refs = text != null ? [text.validationLoss, text.unigramBaseline] : []
  const xMax = Math.max(c.steps ?? 0, ...xs, 1)
  const yLo = Math.min(0, ...ys, ...refs); const yHi = Math.max(...ys, ...refs) * 1.05 || 1
  const x = (v) => L + (W - L - R) * v / xMax
  const y = (v) => T + (H - T - B) * (1 - (v - yLo) / (yHi - yLo || 1))
  const axes = svgNode('g', { class: 'axes' })
  for (const v of ticks(yLo, yHi, 4)) {
    axes.append(svgNode('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }), svgNode('text', { x: L - 4, y: y(v) + 3, 'text-anchor': 'end' }, fmt(v)))
  }
  for (const v of ticks(0, xMax, 5)) axes.append(svgNode('text', { x: x(v), y: H - B + 13, 'text-anchor': 'middle' }, fmt(v)))
  axes.append(svgNode('text', { x: W - R, y: H - 3, 'text-anchor': 'end' }, 'step'), svgNode('text', { x: 4, y: T - 2 }, 'loss'))
  svg.append(axes)
  const ref = (v, cls, label) => {
    const g = svgNode('g', { class: `ref ${cls}`, 'data-testid': cls })
    g.append(svgNode('line', { x1: L, x2: W - R, y1: y(v), y2: y(v) }), svgNode('text', { x: W - R - 2, y: y(v) - 3, 'text-anchor': 'end' }, `${label} ${v.toFixed(3)}`))
    svg.append(g)
  }
  if (text != null) { ref(text.unigramBaseline, 'baseline', 'unigram baseline'); ref(text.validationLoss, 'validation', 'held-out loss') }
  const d = c.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ')
  svg.append(titled(svgNode('path', { d, class: 'curve' }), `${c.peer}: ${c.points.length} reports, last loss ${c.points[c.points.length - 1][1].toFixed(4)} at step ${c.points[c.points.length - 1][0]}`))
  const last = c.points[c.points.length - 1]
  svg.append(svgNode('circle', { cx: x(last[0]), cy: y(last[1]), r: 2.5, class: 'curve-end' }))
  return svg
}

/**
 * The step axis: checkpoints, the steps each verifier checked (one row per
 * verdict), whistleblowers replaying every step, the disputed step and the
 * solver's revealed forced error.
 */
function sampleMap (pic, nameOf) {
  const steps = pic.steps ?? 0
  const rows = [...pic.samples.map(s => ({ kind: 'verdict', ...s })), ...pic.replayingAll.map(p => ({ kind: 'all', verifier: p }))]
  const W = 640; const L = 130; const R = 12; const T = 16; const rowH = 16
  const H = T + Math.max(1, rows.length) * rowH + 30
  const svg = svgNode('svg', { class: 'picture sample-map', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'sampled steps', 'data-testid': 'sample-map' })
  if (!(steps > 0)) {
    svg.append(svgNode('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, 'no proof committed yet'))
    return svg
  }
  const x = (s) => L + (W - L - R) * s / steps
  const axisY = T + Math.max(1, rows.length) * rowH + 4
  const g = svgNode('g', { class: 'axes' })
  g.append(svgNode('line', { x1: L, x2: W - R, y1: axisY, y2: axisY }))
  for (const v of ticks(0, steps, 6)) g.append(svgNode('text', { x: x(v), y: axisY + 13, 'text-anchor': 'middle' }, fmt(v)))
  g.append(svgNode('text', { x: 4, y: axisY + 13 }, 'step'))
  svg.append(g)
  // checkpoints: ticks on the axis (every one when they fit, else every k-th)
  const every = pic.checkpointEvery ?? 0
  if (every > 0) {
    const cks = svgNode('g', { class: 'checkpoints', 'data-testid': 'checkpoints' })
    const stride = Math.max(1, Math.ceil((steps / every) / 200))
    for (let s = 0; s <= steps; s += every * stride) cks.append(svgNode('line', { x1: x(s), x2: x(s), y1: axisY - 4, y2: axisY }))
    svg.append(titled(cks, `a checkpoint every ${every} steps`))
  }
  rows.forEach((r, i) => {
    const y = T + i * rowH + rowH / 2
    const who = r.kind === 'all' ? r.verifier : nameOf(r.verifier)
    svg.append(svgNode('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', class: 'row-label' }, r.kind === 'all' ? `${who} (all)` : `${who}${r.void ? ' (void)' : ''}`))
    if (r.kind === 'all') {
      svg.append(titled(svgNode('rect', { x: L, y: y - 3, width: W - L - R, height: 6, class: 'replay-all' }), `${who} replays every step`))
      return
    }
    const row = svgNode('g', { class: `sample ${r.accept ? 'accept' : 'reject'}`, 'data-testid': 'sample-row', 'data-verifier': who })
    // a verdict lists 0-based transitions: step s takes state s to s + 1
    for (const s of r.steps) row.append(titled(svgNode('circle', { cx: x(s + 0.5), cy: y, r: 2.6 }), `${who} checked step ${s + 1}`))
    svg.append(row)
  })
  const mark = (s, cls, label) => {
    const m = svgNode('g', { class: `mark ${cls}`, 'data-testid': cls, 'data-step': s })
    m.append(svgNode('line', { x1: x(s + 0.5), x2: x(s + 0.5), y1: T - 6, y2: axisY }), svgNode('text', { x: x(s + 0.5) + 3, y: T - 6 }, label))
    svg.append(m)
  }
  for (const d of pic.disputed) mark(d.step, 'disputed', `disputed step ${d.step + 1}`)
  if (pic.forcedStep != null && !pic.disputed.some(d => d.step === pic.forcedStep)) mark(pic.forcedStep, 'forced', `forced error ${pic.forcedStep + 1}`)
  return svg
}

const STAGE = { trace: 'ops of the step', entry: 'op', tensor: 'tensor', rows: 'rows', cols: 'columns', slice: 'slice' }

/**
 * How the bisection narrowed: one bar per defender message, the full extent
 * of what that stage bisects, the part still in dispute filled; the claim the
 * chain ruled on below.
 */
function bisectionView (d) {
  const steps = d.narrowing ?? []
  const W = 640; const L = 210; const R = 12; const rowH = 15; const T = 6
  const H = T + steps.length * rowH + (d.claim != null ? 22 : 6)
  const svg = svgNode('svg', { class: 'picture bisection', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'bisection', 'data-testid': 'bisection', 'data-rounds': steps.length })
  steps.forEach((s, i) => {
    const y = T + i * rowH
    const g = svgNode('g', { class: `narrow ${s.stage}`, 'data-stage': s.stage })
    const where = s.stage === 'tape'
      ? `ops ${s.lo}–${s.hi - 1} of ${s.of}`
      : s.stage === 'entry' ? `op ${s.entry}${s.note ? ` ${s.note}` : ''}`
        : s.stage === 'tensor' ? `op ${s.entry} ${s.tensor} ${s.note ?? ''}`
          : s.stage === 'slice' ? `op ${s.entry} ${s.tensor}, ${s.note ?? ''}`
            : `op ${s.entry} ${s.tensor}: ${STAGE[s.stage]} ${s.lo}–${s.hi - 1} of ${s.of}`
    g.append(svgNode('text', { x: L - 6, y: y + 10, 'text-anchor': 'end' }, where))
    g.append(svgNode('rect', { x: L, y: y + 2, width: W - L - R, height: rowH - 5, class: 'extent' }))
    const w = W - L - R
    const lo = s.of > 0 ? s.lo / s.of : 0; const hi = s.of > 0 ? s.hi / s.of : 1
    g.append(svgNode('rect', { x: L + w * lo, y: y + 2, width: Math.max(2, w * (hi - lo)), height: rowH - 5, class: 'left' }))
    svg.append(titled(g, `message ${s.seq}: ${STAGE[s.stage]} ${s.lo}..${s.hi} of ${s.of}`))
  })
  if (d.claim != null) {
    svg.append(svgNode('text', { x: 4, y: T + steps.length * rowH + 15, class: 'claim', 'data-testid': 'bisection-claim' }, `on chain: ${d.claim.kind} claim — ${d.claim.reason}`.slice(0, 110)))
  }
  return svg
}

/** A text model's result: held-out loss against the baseline, and its sample. */
function textResult (text) {
  const box = document.createElement('div')
  box.className = 'text-result'
  const p = document.createElement('div')
  p.setAttribute('data-testid', 'text-losses')
  p.textContent = `held-out loss ${text.validationLoss.toFixed(3)} nats/token (perplexity ${Math.exp(text.validationLoss).toFixed(1)}) vs unigram baseline ${text.unigramBaseline.toFixed(3)}`
  const pre = document.createElement('pre')
  pre.className = 'gpt-sample'
  pre.setAttribute('data-testid', 'gpt-sample')
  pre.textContent = text.sample
  box.append(p, pre)
  return box
}

window.pictures = { lossCurve, sampleMap, bisectionView, textResult }
