export * from './merkle.js'
export * from './tensor.js'
export * from './state.js'
export * from './chunked.js'
