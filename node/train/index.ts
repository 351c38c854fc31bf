// Programmatic API of the training engine (used by the CLI and, in-process,
// by the solver/verifier actors).
export { initBackend, activeBackend, BACKEND_CHOICES, PINNED_WASM_SHA256, type BackendChoice, type BackendInfo } from './backend.js'
export { loadIdxDataset, syntheticDataset, loadDatasetFor, datasetRef, datasetHash, datasetCommitment, datasetRowsRoot, normalizeRows, oneHot, inputRows, labelRows, textDataset, parseIdx, DEFAULT_FASHION_DIR, DatasetError, type Dataset } from './dataset.js'
export { Trainer, evaluateModel } from './trainer.js'
export { defaultRuntime, chooseRuntime, newTaskProgram, type RuntimeChoice } from './default-runtime.js'
export { pskAddonMissing } from './psk-available.js'
export { buildModel, seededTopology } from './model.js'
export { tapeStep, reexecuteOp, sameBits, type StepTape, type OpValues } from './tape-recorder.js'
export { trainTask, tapeRunStep, type TapeOptions, evaluateSaved, evaluateSaved as evaluate, saveModel, type TrainOptions, type TrainResult, type Progress, type EvaluateOptions, type EvaluateResult } from './run.js'
export { readCheckpoint, writeCheckpoint, listCheckpoints, readProof, readProgram, checkpointDir } from './store.js'
export { fastStateRoot, fastTensorRoot } from './fast-commit.js'
export { replayStep, replaySteps, type ReplayOptions, type ReplayResult, type ReplayManyOptions } from './replay-many.js'
