export * from './prng.js'
export * from './order.js'
