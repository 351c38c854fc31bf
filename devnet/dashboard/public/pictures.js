// proofswarm dashboard pictures, drawn with Chart.js (its browser bundle is
// served from node_modules at /vendor/chart.umd.min.js; nothing from a CDN)
// from the state the server sends (devnet/dashboard/aggregator.ts
// TaskPictures, DisputeRow.narrowing, ChainView.history). The page re-renders
// on every state: charts are kept by key and updated in place, and charts not
// drawn in a frame are destroyed. Loaded before app.js.
'use strict'

/* global Chart */
Chart.defaults.animation = false // live data: every update is drawn at once (and screenshots are exact)
Chart.defaults.font.size = 11
Chart.defaults.color = '#4a5568'
Chart.defaults.plugins.legend.labels.boxWidth = 12
Chart.defaults.plugins.legend.labels.boxHeight = 8

const COLORS = ['#2b6cb0', '#2f855a', '#c05621', '#6b46c1', '#b83280', '#2c7a7b', '#975a16', '#4a5568', '#c53030', '#3182ce', '#38a169', '#d69e2e', '#805ad5', '#e53e3e']
const ACCEPT = '#2f855a'; const REJECT = '#c53030'; const DISPUTED = '#c53030'; const FORCED = '#dd6b20'

const live = new Map() // key → { canvas, chart, frame, w, h }
let frame = 0
function beginFrame () { frame++ }
function endFrame () {
  for (const [k, c] of live) if (c.frame !== frame) { c.chart.destroy(); live.delete(k) }
}

/** The canvas of chart `key`, created once and updated in place afterwards. */
function chartCanvas (key, w, h, config, attrs) {
  const options = { responsive: false, maintainAspectRatio: false, ...config.options }
  let c = live.get(key)
  if (c == null) {
    const canvas = document.createElement('canvas')
    canvas.width = w; canvas.height = h
    c = { canvas, chart: new Chart(canvas, { ...config, options }), w, h }
    live.set(key, c)
  } else {
    c.chart.data = config.data
    c.chart.options = options
    if (c.w !== w || c.h !== h) { c.chart.resize(w, h); c.w = w; c.h = h }
    c.chart.update('none')
  }
  c.frame = frame
  for (const [k, v] of Object.entries(attrs)) c.canvas.setAttribute(k, String(v))
  return c.canvas
}

function box (testid, canvas, empty) {
  const d = document.createElement('div')
  d.className = 'picture'
  d.setAttribute('data-testid', testid)
  d.append(canvas)
  if (empty != null) {
    const p = document.createElement('p')
    p.className = 'empty overlay'
    p.textContent = empty
    d.append(p)
  }
  return d
}

const title = (text) => ({ display: true, text })
const flatLine = (label, v, x1, color, axis = 'y') => ({ label, data: [{ x: 0, y: v }, { x: x1, y: v }], borderColor: color, backgroundColor: color, borderDash: [5, 4], borderWidth: 1.2, pointRadius: 0, yAxisID: axis })

/**
 * The training loss by step (the solver's progress reports, growing while it
 * trains), the held-out loss and unigram baseline of a text model, and the
 * test accuracy the submitter measured, on its own axis.
 */
function lossCurve (key, pic) {
  const c = pic.curve
  const points = (c?.points ?? []).map(([x, y]) => ({ x, y }))
  const text = pic.result?.text
  const acc = pic.result?.accuracy
  const xMax = Math.max(c?.steps ?? 0, pic.steps ?? 0, ...points.map(p => p.x), 1)
  const datasets = [{ label: 'training loss', data: points, borderColor: COLORS[0], backgroundColor: COLORS[0], borderWidth: 1.5, pointRadius: 0, yAxisID: 'y' }]
  if (text != null) {
    datasets.push(flatLine(`held-out loss ${text.validationLoss.toFixed(3)}`, text.validationLoss, xMax, COLORS[1]))
    datasets.push(flatLine(`unigram baseline ${text.unigramBaseline.toFixed(3)}`, text.unigramBaseline, xMax, COLORS[7]))
  }
  const scales = {
    x: { type: 'linear', min: 0, max: xMax, title: title('step') },
    y: { type: 'linear', beginAtZero: true, title: title('loss') }
  }
  if (acc != null) {
    datasets.push({ label: `test accuracy ${(acc * 100).toFixed(2)}%`, data: [{ x: xMax, y: acc * 100 }], yAxisID: 'acc', showLine: false, clip: false, pointStyle: 'rectRot', pointRadius: 6, borderColor: COLORS[2], backgroundColor: COLORS[2] })
    scales.acc = { type: 'linear', position: 'right', min: 0, max: 100, title: title('test accuracy %'), grid: { drawOnChartArea: false } }
  }
  const canvas = chartCanvas(key, 440, 200, { type: 'line', data: { datasets }, options: { scales, plugins: { legend: { position: 'bottom' } } } },
    { 'data-testid': 'loss-curve', 'data-points': points.length, 'aria-label': 'training loss by step', role: 'img' })
  return box('loss-curve-box', canvas, points.length === 0 ? 'no loss reported yet' : null)
}

/**
 * The step axis: checkpoints, the steps each verdict checked (one row each),
 * whistleblowers replaying every step, the disputed step and the solver's
 * revealed forced error.
 */
function sampleMap (key, pic) {
  const steps = pic.steps ?? 0
  const rows = [...pic.samples.map(s => ({ kind: 'verdict', ...s })), ...pic.replayingAll.map(p => ({ kind: 'all', verifier: p }))]
  const labels = [...rows.map(r => r.kind === 'all' ? `${r.verifier} (all)` : `${r.verifier}${r.void ? ' (void)' : ''}`), 'checkpoints']
  const n = rows.length
  const datasets = []
  rows.forEach((r, i) => {
    if (r.kind === 'all') {
      datasets.push({ label: `${r.verifier} replays every step`, data: [{ x: 0, y: i }, { x: steps, y: i }], showLine: true, borderColor: '#90cdf4', backgroundColor: '#90cdf4', borderWidth: 7, pointRadius: 0 })
      return
    }
    // a verdict lists 0-based transitions: step s takes state s to s + 1
    const color = r.accept ? ACCEPT : REJECT
    datasets.push({ label: `${r.verifier} ${r.void ? 'void' : r.accept ? 'accepts' : 'rejects'}`, data: r.steps.map(s => ({ x: s + 0.5, y: i })), borderColor: color, backgroundColor: color, pointRadius: 3 })
  })
  const every = pic.checkpointEvery ?? 0
  if (every > 0 && steps > 0) {
    const cks = []
    for (let s = 0; s <= steps; s += every) cks.push({ x: s, y: n })
    // the last step is a checkpoint too when the spacing does not divide the steps
    if (steps % every !== 0) cks.push({ x: steps, y: n })
    datasets.push({ label: `checkpoints (every ${every} steps)`, data: cks, pointStyle: 'line', rotation: 90, pointRadius: 5, borderColor: '#4a5568', backgroundColor: '#4a5568' })
  }
  const vertical = (s, label, color, dash) => datasets.push({ label, data: [{ x: s + 0.5, y: -0.5 }, { x: s + 0.5, y: n + 0.5 }], showLine: true, borderColor: color, backgroundColor: color, borderWidth: 2, borderDash: dash, pointRadius: 0 })
  // at m > 1 a dispute names a segment: its steps, boxed
  const segmentBox = (d) => datasets.push({ label: `disputed segment ${d.segment}: steps ${d.step + 1}–${d.lastStep + 1}`, data: [{ x: d.step, y: -0.5 }, { x: d.step, y: n + 0.5 }, { x: d.lastStep + 1, y: n + 0.5 }, { x: d.lastStep + 1, y: -0.5 }, { x: d.step, y: -0.5 }], showLine: true, borderColor: DISPUTED, backgroundColor: DISPUTED, borderWidth: 2, pointRadius: 0 })
  for (const d of pic.disputed) { if (d.segment == null) vertical(d.step, `disputed step ${d.step + 1}`, DISPUTED, []); else segmentBox(d) }
  if (pic.forcedStep != null && !pic.disputed.some(d => d.step === pic.forcedStep)) vertical(pic.forcedStep, `forced error ${pic.forcedStep + 1}`, FORCED, [4, 3])
  const scales = {
    x: { type: 'linear', min: 0, max: Math.max(1, steps), title: title('step') },
    y: { type: 'linear', reverse: true, min: -0.6, max: n + 0.6, afterBuildTicks: (axis) => { axis.ticks = labels.map((_, i) => ({ value: i })) }, ticks: { callback: (v) => labels[v] ?? '', autoSkip: false }, grid: { display: false } }
  }
  const canvas = chartCanvas(key, 640, 110 + (n + 1) * 20, { type: 'scatter', data: { datasets }, options: { scales, plugins: { legend: { position: 'bottom' } } } },
    { 'data-testid': 'sample-map', 'data-rows': n, 'aria-label': 'sampled steps', role: 'img' })
  return box('sample-map-box', canvas, steps > 0 ? null : 'no proof committed yet')
}

const STAGE = { trace: 'ops of the step', entry: 'op', tensor: 'tensor', rows: 'rows', cols: 'columns', slice: 'slice' }
function moveLabel (s) {
  return s.stage === 'tape'
    ? `${s.seq}: ops ${s.lo}–${s.hi - 1} of ${s.of}`
    : s.stage === 'entry' ? `${s.seq}: op ${s.entry}${s.note ? ` ${s.note}` : ''}`
      : s.stage === 'tensor' ? `${s.seq}: op ${s.entry} ${s.tensor} ${s.note ?? ''}`
        : s.stage === 'slice' ? `${s.seq}: op ${s.entry} ${s.tensor}, ${s.note ?? ''}`
          : `${s.seq}: op ${s.entry} ${s.tensor} ${STAGE[s.stage]} ${s.lo}–${s.hi - 1} of ${s.of}`
}

/**
 * How the bisection narrows, one bar per message of the defender (step →
 * ops of its trace → one op → a tensor → rows → the element's slice): the
 * stage's whole range in grey, the part still in dispute after that message
 * filled. Grows move by move while the dispute is played.
 */
function bisectionView (key, d) {
  const steps = d.narrowing ?? []
  const datasets = [
    { label: 'still in dispute', data: steps.map(s => s.of > 0 ? [s.lo / s.of, s.hi / s.of] : [0, 1]), backgroundColor: '#dd6b20', grouped: false, order: 1, minBarLength: 3, barPercentage: 0.75, categoryPercentage: 1 },
    { label: 'range of the stage', data: steps.map(() => [0, 1]), backgroundColor: '#e2e8f0', grouped: false, order: 2, barPercentage: 0.75, categoryPercentage: 1 }
  ]
  const options = {
    indexAxis: 'y',
    scales: { x: { min: 0, max: 1, ticks: { callback: (v) => `${Math.round(v * 100)}%` }, title: title('part of the stage\'s range') }, y: { ticks: { autoSkip: false } } },
    plugins: {
      legend: { position: 'bottom' },
      tooltip: { callbacks: { label: (ctx) => { const s = steps[ctx.dataIndex]; return `message ${s.seq}: ${STAGE[s.stage]} ${s.lo}..${s.hi} of ${s.of}` } } }
    }
  }
  const canvas = chartCanvas(key, 640, 80 + steps.length * 20, { type: 'bar', data: { labels: steps.map(moveLabel), datasets }, options },
    { 'data-testid': 'bisection', 'data-rounds': steps.length, 'aria-label': 'bisection', role: 'img' })
  return box('bisection-box', canvas, steps.length === 0 ? 'no move yet' : null)
}

const UNIT_MILLI = 10n ** 9n // chain amounts have 12 decimals: plotted in units, to 3 decimals
const toUnits = (v) => { try { return v == null ? null : Number(BigInt(v) / UNIT_MILLI) / 1000 } catch { return null } }

/**
 * Stakes and balances over time, by block: the free balance of each account
 * that moved, and its reserved funds (bonds, escrow, stake) with its
 * registered stake dashed. One sample per block the dashboard read.
 */
function balanceCharts (key, history) {
  const names = []
  for (const h of history) for (const n of Object.keys(h.accounts)) if (!names.includes(n)) names.push(n)
  const series = (name, field) => history.map(h => ({ x: h.block, y: toUnits(h.accounts[name]?.[field]) }))
  const moved = (pts) => pts.some(p => p.y !== pts[0].y)
  const color = (name) => COLORS[names.indexOf(name) % COLORS.length]
  const shown = names.filter(n => moved(series(n, 'free')) || series(n, 'reserved').some(p => p.y > 0) || series(n, 'stake').some(p => p.y > 0))
  const free = shown.map(n => ({ label: n, data: series(n, 'free'), borderColor: color(n), backgroundColor: color(n), borderWidth: 1.5, pointRadius: 0, stepped: true }))
  const held = []
  for (const n of shown) {
    const r = series(n, 'reserved')
    if (r.some(p => p.y > 0)) held.push({ label: `${n} reserved`, data: r, borderColor: color(n), backgroundColor: color(n), borderWidth: 1.5, pointRadius: 0, stepped: true })
    const s = series(n, 'stake')
    if (s.some(p => p.y > 0)) held.push({ label: `${n} stake`, data: s, borderColor: color(n), backgroundColor: color(n), borderWidth: 1, borderDash: [5, 3], pointRadius: 0, stepped: true })
  }
  const blocks = history.map(h => h.block)
  const x = { type: 'linear', min: blocks[0] ?? 0, max: Math.max(blocks[blocks.length - 1] ?? 1, (blocks[0] ?? 0) + 1), title: title('block') }
  const opts = (y) => ({ scales: { x, y: { type: 'linear', title: title(y) } }, plugins: { legend: { position: 'bottom' } } })
  return [
    box('balances-free-box', chartCanvas(`${key}/free`, 640, 240, { type: 'line', data: { datasets: free }, options: opts('free balance (units)') }, { 'data-testid': 'balances-free', 'data-samples': history.length }), history.length === 0 ? 'no samples yet' : null),
    box('balances-held-box', chartCanvas(`${key}/held`, 640, 240, { type: 'line', data: { datasets: held }, options: opts('reserved and staked (units)') }, { 'data-testid': 'balances-held', 'data-samples': history.length }), history.length === 0 ? 'no samples yet' : null)
  ]
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

window.pictures = { beginFrame, endFrame, lossCurve, sampleMap, bisectionView, balanceCharts, textResult }
