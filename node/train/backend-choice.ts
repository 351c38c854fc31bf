// The backends an operator may ask for; apart from backend.ts so that a peer
// (which never loads TensorFlow.js) can check a choice.

export type BackendChoice = 'auto' | 'wasm' | 'cpu' | 'node' | 'node-gpu'
export const BACKEND_CHOICES: BackendChoice[] = ['auto', 'wasm', 'cpu', 'node', 'node-gpu']
