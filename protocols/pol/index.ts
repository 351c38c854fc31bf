export * from './proof.js'
export * from './checkpoint.js'
export * from './segments.js'
