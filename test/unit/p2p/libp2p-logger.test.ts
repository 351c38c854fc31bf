import { describe, expect, it } from 'vitest'
import { libp2pLogger } from '../../../node/p2p/libp2p-logger.js'

describe('libp2p component logger', () => {
  it('is one silent logger unless DEBUG names something', () => {
    const l = libp2pLogger({})
    expect(l).toBeDefined()
    const a = l!.forComponent('libp2p:tcp')
    expect(a.enabled).toBe(false)
    expect(a.newScope('conn')).toBe(a) // no logger built per connection or stream
    expect(() => { a('x %s', 1); a.error('e'); a.trace('t') }).not.toThrow()
    expect(libp2pLogger({ DEBUG: '  ' })).toBeDefined()
  })

  it('leaves libp2p its own loggers when DEBUG is set', () => {
    expect(libp2pLogger({ DEBUG: 'libp2p:*' })).toBeUndefined()
  })
})
