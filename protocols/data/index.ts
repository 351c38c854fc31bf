export * from './prng.js'
export * from './order.js'
export * from './layout.js'
