import { describe, expect, it } from 'vitest'
import { bar, ProgressLine, ttyItem } from '../../../devnet/progress.js'

function sink (isTTY: boolean): { out: string[], isTTY: boolean, columns: number, write: (s: string) => void } {
  const out: string[] = []
  return { out, isTTY, columns: 80, write: (s: string) => { out.push(s) } }
}

describe('devnet progress', () => {
  it('draws bars with a percentage and an ETA', () => {
    expect(bar(0, 10)).toBe('░'.repeat(10))
    expect(bar(1, 10)).toBe('█'.repeat(10))
    expect(bar(0.55, 10)).toBe('█████▌░░░░')
    expect(bar(7, 4)).toBe('████')
    expect(ttyItem({ label: 'peer2-solver training', fraction: 0.5, etaSec: 6.4, text: 'x' })).toMatch(/^peer2-solver training █+░+ 50% ETA 6 s$/)
    expect(ttyItem({ label: 'peer2-solver done', text: 'proof root 12ab' })).toBe('peer2-solver done: proof root 12ab')
  })

  it('on a terminal: redraws one line in place, and log lines go above it', () => {
    const s = sink(true)
    const p = new ProgressLine(s)
    p.set('a', { label: 'training', fraction: 0.25, text: 'step 250/1000' })
    p.set('a', { label: 'training', fraction: 0.5, text: 'step 500/1000' })
    p.log('a message')
    p.set('w', { label: 'challenge window', fraction: 0.1, etaSec: 30, text: '60 blocks left' })
    const all = s.out.join('')
    // every redraw erases the previous line first; the message is printed on a line of its own
    expect(all).toContain('\r\x1b[Ka message\n')
    expect(all.split('\r\x1b[K').at(-1)).toMatch(/^training █+▌?░+ 50% │ challenge window █*▌?░+ 10% ETA 30 s$/)
    p.clear()
    expect(s.out.at(-1)).toBe('\r\x1b[K')
    expect(all).not.toMatch(/step 250\/1000/)
  })

  it('a terminal without a size (0 columns) gets a full line, a narrow one a cut line', () => {
    const wide = { ...sink(true), columns: 0 }
    new ProgressLine(wide).set('a', { label: 'peer2-solver training', fraction: 0.5, etaSec: 3, text: 'x' })
    expect(wide.out.join('')).toMatch(/peer2-solver training █+░+ 50% ETA 3 s$/)
    const narrow = { ...sink(true), columns: 30 }
    new ProgressLine(narrow).set('a', { label: 'peer2-solver training', fraction: 0.5, etaSec: 3, text: 'x' })
    expect(narrow.out.join('').length).toBe(29)
    expect(narrow.out.join('').endsWith('…')).toBe(true)
  })

  it('otherwise: a plain line when the text changes, at most every everyMs per item', () => {
    const s = sink(false)
    let t = 0
    const p = new ProgressLine(s, 3000, () => t)
    p.set('a', { label: 'peer2-solver', fraction: 0.1, text: 'step 100/1000' })
    t = 1000
    p.set('a', { label: 'peer2-solver', fraction: 0.2, text: 'step 200/1000' })
    t = 3500
    p.set('a', { label: 'peer2-solver', fraction: 0.2, text: 'step 200/1000' })
    p.set('a', { label: 'peer2-solver', fraction: 0.2, text: 'step 210/1000' })
    t = 7000
    p.set('a', { label: 'peer2-solver', fraction: 0.2, text: 'step 210/1000' })
    p.log('msg')
    expect(s.out).toEqual(['peer2-solver: step 100/1000\n', 'peer2-solver: step 200/1000\n', 'peer2-solver: step 210/1000\n', 'msg\n'])
  })
})
