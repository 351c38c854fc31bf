// The chain client's plain-value conversion is the protocol's (protocols/scale).
export * from '../../protocols/scale/plain.js'
