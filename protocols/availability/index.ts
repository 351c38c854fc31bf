export * from './headers.js'
export * from './checkpoint-check.js'
export * from './serve.js'
export * from './dataset-serve.js'
