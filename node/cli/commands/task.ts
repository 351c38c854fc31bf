import type { Command } from 'commander'
import { writeFileSync } from 'node:fs'
import { newProgram, programHash, rootEveryOf, validateProgram, type TaskProgram } from '../../../protocols/program/program.js'
import { DEFAULT_ROOT_EVERY, MAX_ROOT_EVERY, committedSpacing, defaultRootEvery } from '../../../protocols/pol/segments.js'
import { readJson } from '../../train/store.js'
import { admissibility } from '../../../protocols/program/admissible.js'
import { supportsElement } from '../../../protocols/reference/index.js'
import { RUNTIMES, WASM_PSK_RUNTIME, WASM_RUNTIME } from '../../../protocols/program/runtime.js'
import { CHUNKED_STATE, stateCommitmentName, validateStateCommitment } from '../../../protocols/program/state-commitment.js'
import { chooseRuntime } from '../../train/default-runtime.js'
import { ZOO } from '../../../protocols/program/zoo.js'
import { datasetRef, loadIdxDataset, syntheticDataset, textDataset } from '../../train/dataset.js'
import { TEXT_CORPORA } from '../../train/text-dataset.js'
import { ASCII_VOCAB, DEFAULT_CONTEXT, DEFAULT_GPT, type GptSpec } from '../../../protocols/program/gpt.js'
import { intOpt, numOpt, wrapError } from '../train-util.js'
import { CliError } from '../errors.js'
import { checkpointCostSteps, recommendedCheckpointEvery } from '../../../protocols/verification/sample.js'
import { programSize, stepFlops } from '../../../protocols/scheduling/estimate.js'

interface NewOpts {
  local?: boolean
  rowsRoot: boolean
  model: string
  dataset: string
  datasetDir?: string
  context: string
  layers?: string
  dModel?: string
  heads?: string
  mlp?: string
  steps: string
  seed?: string
  batch?: string
  checkpointEvery?: string
  rootEvery?: string
  stateCommitment?: string
  optimizer: string
  lr?: string
  runtime?: string
  syntheticSize?: string
  out?: string
}

export function register (program: Command): void {
  const task = program.command('task').description('create and inspect training task programs')
  task.command('new')
    .description('print a valid task program (JSON) for a zoo model')
    .requiredOption('--model <name>', `zoo model: ${[...Object.keys(ZOO), 'gpt'].join(' | ')}`)
    .requiredOption('--dataset <dir|synthetic|text>', `directory with the four IDX files (gz or raw), "synthetic", or a text corpus for --model gpt: ${Object.keys(TEXT_CORPORA).join(' | ')} (directory with --dataset-dir)`)
    .option('--dataset-dir <dir>', 'text corpus directory (default: where its Debian package installs it)')
    .option('--context <n>', 'gpt: context length in characters', String(DEFAULT_CONTEXT))
    .option('--layers <n>', `gpt: transformer blocks (default ${DEFAULT_GPT.layers})`)
    .option('--d-model <n>', `gpt: model width (default ${DEFAULT_GPT.dModel})`)
    .option('--heads <n>', `gpt: attention heads (default ${DEFAULT_GPT.heads})`)
    .option('--mlp <n>', `gpt: MLP hidden width (default ${DEFAULT_GPT.mlp})`)
    .requiredOption('--steps <n>', 'number of training steps')
    .option('--seed <s>', 'program seed (uint32): init and data order', '1')
    .option('--batch <b>', 'batch size', '64')
    .option('--checkpoint-every <k>', 'checkpoint interval in steps (default: √(steps/44) rounded, e.g. 5 at 1000 steps, 15 at 10,000, within 1000 checkpoints and 2 GiB of them: the least verification replay plus checkpoint cost; docs/protocol.md §5)')
    .option('--root-every <m>', `state roots every m steps (1 … ${MAX_ROOT_EVERY}; must divide --checkpoint-every, and the default spacing is rounded up to a multiple of m): hashing falls by m, disputes narrow to an m-step segment first (docs/training.md). Default ${DEFAULT_ROOT_EVERY}; 1 (a root after every step) for a task of fewer steps or a --checkpoint-every that ${DEFAULT_ROOT_EVERY} does not divide`)
    .option('--state-commitment <scheme>', `state roots over "${CHUNKED_STATE}" commitments (docs/training.md "Chunked roots: design"). Default: row + column`)
    .option('--optimizer <name>', 'sgd | adam', 'adam')
    .option('--lr <x>', 'learning rate (default: sgd 0.05, adam 0.001)')
    .option('--runtime <id>', `pinned runtime: ${Object.keys(RUNTIMES).join(' | ')} (default: ${WASM_PSK_RUNTIME} where its native kernels are built, else ${WASM_RUNTIME}, with a warning)`)
    .option('--synthetic-size <n>', 'training rows of the synthetic dataset', '2048')
    .option('--no-rows-root', 'skip dataset.rowsRoot (the commitment to the normalised rows; ~1.3 s for Fashion-MNIST)')
    .option('--local', 'allow a program that is not verifiable on chain (e.g. --runtime tfjs-cpu@4.22.0): for local training and replay only; submit refuses it')
    .option('--out <file>', 'write to a file instead of stdout')
    .action((o: NewOpts) => {
      try {
        if (o.optimizer !== 'sgd' && o.optimizer !== 'adam') throw new CliError(`--optimizer must be sgd or adam, got "${o.optimizer}"`)
        const isText = TEXT_CORPORA[o.dataset] !== undefined
        if (isText !== (o.model === 'gpt')) throw new CliError(o.model === 'gpt' ? `--model gpt trains on a text corpus: --dataset ${Object.keys(TEXT_CORPORA).join(' | ')}` : `--dataset ${o.dataset} is a text corpus: use --model gpt`)
        const ds = isText
          ? textDataset(o.dataset, { vocab: ASCII_VOCAB, context: intOpt(o.context, '--context', 1, 1024) as number }, o.datasetDir)
          : o.dataset === 'synthetic'
            ? syntheticDataset(intOpt(o.seed, '--seed', 0, 0xffffffff) ?? 1, intOpt(o.syntheticSize, '--synthetic-size', 16, 1_000_000), 512)
            : loadIdxDataset(o.dataset)
        const gpt: Partial<GptSpec> = {}
        const sizes = { layers: [o.layers, '--layers', 48], dModel: [o.dModel, '--d-model', 4096], heads: [o.heads, '--heads', 256], mlp: [o.mlp, '--mlp', 16384] } as const
        for (const [k, [v, flag, max]] of Object.entries(sizes)) { const n = intOpt(v, flag, 1, max); if (n !== undefined) gpt[k as keyof typeof sizes] = n }
        const steps = intOpt(o.steps, '--steps', 1, 500_000) as number
        const checkpointEvery = intOpt(o.checkpointEvery, '--checkpoint-every', 1, 500_000)
        const rootEvery = intOpt(o.rootEvery, '--root-every', 1, MAX_ROOT_EVERY) ?? defaultRootEvery(steps, checkpointEvery)
        if (checkpointEvery !== undefined && checkpointEvery % rootEvery !== 0) throw new CliError(`--root-every ${rootEvery} must divide --checkpoint-every ${checkpointEvery} (every checkpoint is a committed state)`)
        const optimizer = o.optimizer
        let stateCommitment: ReturnType<typeof validateStateCommitment>
        try { stateCommitment = validateStateCommitment(o.stateCommitment) } catch (e) { throw new CliError(`--state-commitment: ${(e as Error).message}`) }
        const chosen = chooseRuntime(o.runtime)
        if (chosen.warning !== undefined) process.stderr.write(`warning: ${chosen.warning}\n`)
        const build = (k: number | undefined, m: number): TaskProgram => newProgram({
          model: o.model,
          gpt,
          dataset: datasetRef(ds, { rowsRoot: o.rowsRoot }),
          steps,
          seed: intOpt(o.seed, '--seed', 0, 0xffffffff),
          batchSize: intOpt(o.batch, '--batch', 1, 4096),
          checkpointEvery: k,
          rootEvery: m,
          stateCommitment,
          optimizer,
          learningRate: numOpt(o.lr, '--lr'),
          runtime: chosen.runtime
        })
        let p = build(checkpointEvery, checkpointEvery === undefined ? 1 : rootEvery)
        if (o.checkpointEvery === undefined) {
          // spacing from the task's length and its state's size (weights + optimizer slots, float32)
          const v = validateProgram(p)
          const stateBytes = v.info.params * (o.optimizer === 'adam' ? 3 : 1) * 4
          // a checkpoint's cost in steps of this task: more when its step does little work per byte of state
          const k = recommendedCheckpointEvery(p.steps, stateBytes, checkpointCostSteps(stateBytes, stepFlops(programSize(v))))
          if (rootEvery === 1) p.checkpointEvery = k
          // a checkpoint must be a committed state: the spacing rounded up to a multiple of m
          else p = build(committedSpacing(k, p.steps, rootEvery), rootEvery)
        }
        const adm = admissibility(validateProgram(p), supportsElement)
        if (!adm.ok && o.local !== true) throw new CliError(`task refused: ${adm.reason}; pass --local to write it for local training only`, 2)
        if (!adm.ok) process.stderr.write(`warning: local-only program: ${adm.reason}\n`)
        const text = JSON.stringify(p, null, 2) + '\n'
        if (o.out !== undefined) writeFileSync(o.out, text)
        else process.stdout.write(text)
      } catch (e) { wrapError(e) }
    })
  task.command('check')
    .description('validate a task program and print its program hash')
    .argument('<file>', 'task program (JSON)')
    .option('--json', 'print the result as JSON')
    .action((file: string, o: { json?: boolean }) => {
      try {
        const p = validateProgram(readJson(file, 'task file'))
        const adm = admissibility(p, supportsElement)
        const r = {
          programHash: programHash(p), verifiable: adm.ok, ...(adm.ok ? {} : { notVerifiable: adm.reason }),
          runtime: p.runtime, model: p.model.name, params: p.info.params, steps: p.steps,
          checkpointEvery: p.checkpointEvery, rootEvery: rootEveryOf(p), stateCommitment: p.stateCommitment ?? 'row-column', batchSize: p.batchSize,
          optimizer: p.optimizer.name, dataset: p.dataset.name, datasetSha256: p.dataset.sha256
        }
        if (o.json === true) process.stdout.write(JSON.stringify(r) + '\n')
        else process.stdout.write(`valid: ${r.model} (${r.params} parameters), ${r.steps} steps of ${r.batchSize} with ${r.optimizer} on ${r.dataset}, runtime ${r.runtime}\ncheckpoints every ${r.checkpointEvery} steps, state roots every ${r.rootEvery === 1 ? 'step' : `${r.rootEvery} steps`} over ${stateCommitmentName(p)} commitments\nprogram hash ${r.programHash}\n${adm.ok ? 'verifiable on chain' : `local only: ${adm.reason}`}\n`)
      } catch (e) { wrapError(e) }
    })
}
