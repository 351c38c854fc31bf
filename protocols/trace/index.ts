export * from './trace.js'
