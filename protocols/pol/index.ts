export * from './proof.js'
export * from './checkpoint.js'
