#!/usr/bin/env node
// Tests train on the real Fashion-MNIST from the Debian package
// dataset-fashion-mnist. If it is missing, install it when we can (root with
// apt-get), else stop with the one command that fixes it.
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

const DIR = process.env.PROOFSWARM_FASHION_MNIST ?? '/usr/share/datasets/fashion-mnist'
const FILE = 'train-images-idx3-ubyte.gz'
const have = () => existsSync(`${DIR}/${FILE}`) || existsSync(`${DIR}/train-images-idx3-ubyte`)

if (!have()) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  if (root && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0) {
    process.stderr.write('Fashion-MNIST is missing: installing the Debian package dataset-fashion-mnist…\n')
    const r = spawnSync('apt-get', ['install', '-y', 'dataset-fashion-mnist'], { stdio: 'inherit' })
    if (r.status !== 0) spawnSync('sh', ['-c', 'apt-get update && apt-get install -y dataset-fashion-mnist'], { stdio: 'inherit' })
  }
  if (!have()) {
    process.stderr.write(`Fashion-MNIST not found in ${DIR}.\nInstall it with: sudo apt-get install -y dataset-fashion-mnist\n(or set PROOFSWARM_FASHION_MNIST to a directory with the IDX files)\n`)
    process.exit(1)
  }
}
