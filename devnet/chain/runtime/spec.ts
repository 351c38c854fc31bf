import { FEASIBILITY_ERRORS, FORCED_ROOM_ERRORS, PRICE_ERRORS, WINDOW_ERRORS } from './feasibility-spec.js'
import type { Fields, NamedTypes } from './types.js'
import type { ErrorSpec, PalletSpec } from './spec-types.js'
import { AVAILABILITY_CALLS, AVAILABILITY_ERRORS, AVAILABILITY_EVENTS, AVAILABILITY_MANY_CALLS, AVAILABILITY_NEED_ERRORS, AVAILABILITY_STORAGE, AVAILABILITY_TYPES } from './availability-spec.js'
import { ASSIGNMENT_ERRORS, ASSIGNMENT_EVENTS, ASSIGNMENT_STORAGE, ASSIGNMENT_TYPES } from './assignment-spec.js'
import { INITIAL_STATE_CALLS, INITIAL_STATE_ERRORS, INITIAL_STATE_EVENTS } from './initial-state-spec.js'
import { DIVERGENCE_CALLS, DIVERGENCE_ERRORS, DIVERGENCE_EVENTS, DIVERGENCE_TYPES } from './divergence-spec.js'
import { CHUNK_CALLS, CHUNK_ERRORS, CHUNK_EVENTS, CHUNK_STORAGE, CHUNK_TYPES } from './chunk-sampling-spec.js'
import { STAKE_EVENTS, STAKE_STORAGE, UNASSIGNED_TIMEOUT } from './stake-spec.js'
import { RENT_ERRORS, RENT_EVENTS, RENT_STORAGE, RENT_TYPES } from './rent-spec.js'
import { SEGMENT_ERRORS, SEGMENT_STORAGE } from './segment-spec.js'
import { STATE_COMMITMENT_STORAGE } from './state-commitment-spec.js'
import { TAPE_QUEUE_STORAGE } from './tape-queue-spec.js'
import { DRAW_CALLS, DRAW_ERRORS, DRAW_EVENTS, DRAW_STORAGE, DRAW_TYPES } from './draw-spec.js'
import { RERUN_COST_STORAGE } from './rerun-cost-spec.js'
import { SERVE_ERRORS, SERVE_EVENTS, SERVE_STORAGE, SERVE_TYPES } from './availability-serve-spec.js'
import { DATASET_CALLS, DATASET_ERRORS, DATASET_EVENTS, DATASET_STORAGE, DATASET_TYPES } from './dataset-availability-spec.js'
import { CAPABILITY_CALLS, CAPABILITY_ERRORS, CAPABILITY_EVENTS, CAPABILITY_STORAGE } from './runtime-capability-spec.js'
import { CHALLENGE_COMMIT_CALLS, CHALLENGE_COMMIT_ERRORS, CHALLENGE_COMMIT_EVENTS, CHALLENGE_COMMIT_STORAGE, CHALLENGE_COMMIT_TYPES } from './challenge-commit-spec.js'

export type { CallSpec, ConstantSpec, ErrorSpec, EventSpec, Hasher, PalletSpec, StorageSpec } from './spec-types.js'

// The declarative description of the runtime: every type, storage item, call,
// event, error and constant of every pallet. Metadata V14 is generated from it,
// and it is the interface a production Substrate pallet must implement
// (docs/pallet-interface.md). Names are the Rust ones (snake_case calls and
// fields); polkadot.js exposes them camelCased (api.tx.arbitration.submitTask).

export const RUNTIME_PATH = 'proofswarm_runtime'

// Node roles, a bitmask in NodeInfo.roles.
export { ROLE_SUBMITTER, ROLE_SOLVER, ROLE_VERIFIER, ROLE_WHISTLEBLOWER, ROLE_ALL } from '../../../protocols/roles.js'

// Arbitration pallet constants (metadata constants, like a Rust pallet's Config `Get<_>` items).
/** blocks a solver has, after a SolverProof dispute is adjudicated against it, to reveal that the step was its forced error, and after DrawRequested to reveal its draw */
export const REVEAL_WINDOW = 30
/** share of its stake (ppm) a verifier loses when an accept of it listed the revealed forced step, or the proof's initial state is ruled wrong */
export const VERIFIER_SLASH_PPM = 200_000
/** times the challenge window is extended when it ends without a quorum of standing verdicts */
export const MAX_VERIFY_EXTENSIONS = 2
/**
 * the longest solve_timeout or challenge_window (blocks; 97 days at 500 ms): every deadline the
 * runtime derives from them (a solver's, a round's end, a dispute's) must stay a u32 block number
 */
export const MAX_TASK_PERIOD = 1 << 24

const SLICE_PROOF: Fields = [['dtype', 'TensorDType'], ['shape', 'Vec<u32>'], ['axis', 'SliceAxis'], ['index', 'u32'], ['bytes', 'Vec<u8>'], ['siblings', 'Vec<H256>'], ['other_root', 'H256']]

export const NAMED_TYPES: NamedTypes = {
  // ---- standard Substrate types (paths polkadot.js special-cases) ----
  AccountId: { path: ['sp_core', 'crypto', 'AccountId32'], fields: [[null, '[u8; 32]']] },
  H256: { path: ['primitive_types', 'H256'], fields: [[null, '[u8; 32]']] },
  MultiAddress: {
    path: ['sp_runtime', 'multiaddress', 'MultiAddress'],
    params: [['AccountId', 'AccountId'], ['AccountIndex', '()']],
    variants: [{ name: 'Id', fields: [[null, 'AccountId']] }, { name: 'Index', fields: [[null, 'Compact<()>']] }, { name: 'Raw', fields: [[null, 'Vec<u8>']] }, { name: 'Address32', fields: [[null, '[u8; 32]']] }, { name: 'Address20', fields: [[null, '[u8; 20]']] }]
  },
  MultiSignature: {
    path: ['sp_runtime', 'MultiSignature'],
    variants: [{ name: 'Ed25519', fields: [[null, '[u8; 64]']] }, { name: 'Sr25519', fields: [[null, '[u8; 64]']] }, { name: 'Ecdsa', fields: [[null, '[u8; 65]']] }]
  },
  Era: { path: ['sp_runtime', 'generic', 'era', 'Era'], variants: [{ name: 'Immortal' }] },
  UncheckedExtrinsic: {
    path: ['sp_runtime', 'generic', 'unchecked_extrinsic', 'UncheckedExtrinsic'],
    params: [['Address', 'MultiAddress'], ['Call', 'RuntimeCall'], ['Signature', 'MultiSignature'], ['Extra', 'SignedExtra']],
    fields: [[null, 'Vec<u8>']]
  },
  CheckNonZeroSender: { path: ['frame_system', 'extensions', 'check_non_zero_sender', 'CheckNonZeroSender'], fields: [] },
  CheckSpecVersion: { path: ['frame_system', 'extensions', 'check_spec_version', 'CheckSpecVersion'], fields: [] },
  CheckTxVersion: { path: ['frame_system', 'extensions', 'check_tx_version', 'CheckTxVersion'], fields: [] },
  CheckGenesis: { path: ['frame_system', 'extensions', 'check_genesis', 'CheckGenesis'], fields: [] },
  CheckMortality: { path: ['frame_system', 'extensions', 'check_mortality', 'CheckMortality'], fields: [[null, 'Era']] },
  CheckNonce: { path: ['frame_system', 'extensions', 'check_nonce', 'CheckNonce'], fields: [[null, 'Compact<u32>']] },
  CheckWeight: { path: ['frame_system', 'extensions', 'check_weight', 'CheckWeight'], fields: [] },
  ChargeTransactionPayment: { path: ['pallet_transaction_payment', 'ChargeTransactionPayment'], fields: [[null, 'Compact<u128>']] },
  SignedExtra: { path: [RUNTIME_PATH, 'SignedExtra'], fields: [['extensions', '(CheckNonZeroSender, CheckSpecVersion, CheckTxVersion, CheckGenesis, CheckMortality, CheckNonce, CheckWeight, ChargeTransactionPayment)']] },
  Runtime: { path: [RUNTIME_PATH, 'Runtime'], fields: [] },
  RuntimeCall: { path: [RUNTIME_PATH, 'RuntimeCall'], variants: [] }, // filled by buildMetadata from the pallets
  RuntimeEvent: { path: [RUNTIME_PATH, 'RuntimeEvent'], variants: [] },
  EventRecord: {
    path: ['frame_system', 'EventRecord'],
    params: [['E', 'RuntimeEvent'], ['T', 'H256']],
    fields: [['phase', 'Phase'], ['event', 'RuntimeEvent'], ['topics', 'Vec<H256>']]
  },
  Phase: { path: ['frame_system', 'Phase'], variants: [{ name: 'ApplyExtrinsic', fields: [[null, 'u32']] }, { name: 'Finalization' }, { name: 'Initialization' }] },
  Weight: { path: ['sp_weights', 'weight_v2', 'Weight'], fields: [['ref_time', 'Compact<u64>'], ['proof_size', 'Compact<u64>']] },
  DispatchClass: { path: ['frame_support', 'dispatch', 'DispatchClass'], variants: [{ name: 'Normal' }, { name: 'Operational' }, { name: 'Mandatory' }] },
  Pays: { path: ['frame_support', 'dispatch', 'Pays'], variants: [{ name: 'Yes' }, { name: 'No' }] },
  DispatchInfo: { path: ['frame_support', 'dispatch', 'DispatchInfo'], fields: [['weight', 'Weight'], ['class', 'DispatchClass'], ['pays_fee', 'Pays']] },
  ModuleError: { path: ['sp_runtime', 'ModuleError'], fields: [['index', 'u8'], ['error', '[u8; 4]']] },
  TokenError: { path: ['sp_runtime', 'TokenError'], variants: ['FundsUnavailable', 'OnlyProvider', 'BelowMinimum', 'CannotCreate', 'UnknownAsset', 'Frozen', 'Unsupported', 'CannotCreateHold', 'NotExpendable', 'Blocked'].map(name => ({ name })) },
  ArithmeticError: { path: ['sp_arithmetic', 'ArithmeticError'], variants: [{ name: 'Underflow' }, { name: 'Overflow' }, { name: 'DivisionByZero' }] },
  TransactionalError: { path: ['sp_runtime', 'TransactionalError'], variants: [{ name: 'LimitReached' }, { name: 'NoLayer' }] },
  DispatchError: {
    path: ['sp_runtime', 'DispatchError'],
    variants: [
      { name: 'Other' }, { name: 'CannotLookup' }, { name: 'BadOrigin' }, { name: 'Module', fields: [[null, 'ModuleError']] },
      { name: 'ConsumerRemaining' }, { name: 'NoProviders' }, { name: 'TooManyConsumers' }, { name: 'Token', fields: [[null, 'TokenError']] },
      { name: 'Arithmetic', fields: [[null, 'ArithmeticError']] }, { name: 'Transactional', fields: [[null, 'TransactionalError']] },
      { name: 'Exhausted' }, { name: 'Corruption' }, { name: 'Unavailable' }, { name: 'RootNotAllowed' }
    ]
  },
  AccountData: { path: ['pallet_balances', 'types', 'AccountData'], params: [['Balance', 'u128']], fields: [['free', 'u128'], ['reserved', 'u128'], ['frozen', 'u128'], ['flags', 'ExtraFlags']] },
  ExtraFlags: { path: ['pallet_balances', 'types', 'ExtraFlags'], fields: [[null, 'u128']] },
  RuntimeVersion: { path: ['sp_version', 'RuntimeVersion'], fields: [['spec_name', 'str'], ['impl_name', 'str'], ['authoring_version', 'u32'], ['spec_version', 'u32'], ['impl_version', 'u32'], ['apis', 'Vec<([u8; 8], u32)>'], ['transaction_version', 'u32'], ['system_version', 'u8']] },
  AccountInfo: { path: ['frame_system', 'AccountInfo'], params: [['Nonce', 'u32'], ['AccountData', 'AccountData']], fields: [['nonce', 'u32'], ['consumers', 'u32'], ['providers', 'u32'], ['sufficients', 'u32'], ['data', 'AccountData']] },

  // ---- arbitration ----
  NodeInfo: { path: ['pallet_arbitration', 'types', 'NodeInfo'], fields: [['peer_id', 'Vec<u8>'], ['roles', 'u8'], ['stake', 'u128'], ['active_tasks', 'u32'], ['registered_at', 'u32']] },
  TaskPhase: { path: ['pallet_arbitration', 'types', 'TaskPhase'], variants: ['Unassigned', 'Solving', 'Verifying', 'Settled', 'Failed', 'Unverified', 'Expired', 'Faulted'].map(name => ({ name })) },
  Verdict: { path: ['pallet_arbitration', 'types', 'Verdict'], fields: [['verifier', 'AccountId'], ['accept', 'bool'], ['checked_steps', 'Vec<u32>'], ['void', 'bool']] },
  TaskInfo: {
    path: ['pallet_arbitration', 'types', 'TaskInfo'],
    fields: [
      ['submitter', 'AccountId'], ['program_hash', 'H256'], ['dataset_root', 'H256'], ['skeleton_root', 'H256'],
      ['steps', 'u32'], ['checkpoint_every', 'u32'], ['escrow', 'u128'], ['solver_reward', 'u128'], ['verifier_reward', 'u128'],
      ['verifier_count', 'u32'], ['challenge_window', 'u32'], ['solve_timeout', 'u32'],
      ['phase', 'TaskPhase'], ['solver', 'Option<AccountId>'], ['deadline', 'u32'], ['excluded', 'Vec<AccountId>'],
      ['proof_root', 'H256'], ['final_state_root', 'H256'], ['step_count', 'u32'], ['checkpoints', 'Vec<Vec<u8>>'],
      ['committed_at', 'u32'], ['challenge_end', 'u32'], ['selection_seed', 'H256'], ['revealed_forced_error', 'Option<u32>'], ['rulings', 'Vec<ProofRuling>'], ['solver_failed', 'bool'],
      ['verdicts', 'Vec<Verdict>'], ['open_disputes', 'u32'], ['created_at', 'u32'], ['extensions', 'u8'],
      ['divergence', 'Option<Divergence>']
    ]
  },
  RulingOutcome: {
    path: ['pallet_arbitration', 'types', 'RulingOutcome'],
    variants: [{ name: 'AwaitingReveal' }, { name: 'ForcedError' }, { name: 'SolverPenalized' }],
    docs: ['AwaitingReveal: the solver may still reveal a forced error at this step; ForcedError: it did (no slash, jackpot); SolverPenalized: it did not in time (slashed)']
  },
  ClaimKind: {
    path: ['pallet_arbitration', 'types', 'ClaimKind'],
    variants: ['Skeleton', 'Input', 'State', 'Element', 'Data', 'Lie', 'BadOpen', 'Init', 'Nan', 'Convert'].map(name => ({ name })),
    docs: ['The kind of the claim a dispute was adjudicated on (protocols/dispute/claim.ts)']
  },
  ProofRuling: {
    path: ['pallet_arbitration', 'types', 'ProofRuling'],
    fields: [['dispute_id', 'u64'], ['challenger', 'AccountId'], ['step', 'u32'], ['reveal_deadline', 'u32'], ['outcome', 'RulingOutcome'], ['claim_kind', 'ClaimKind'], ['honest_post', 'Option<H256>']],
    docs: ['A SolverProof dispute adjudicated for its challenger: the solver\'s penalty waits for a forced-error reveal until reveal_deadline. claim_kind: what it was decided on; honest_post (State only): the post-state root the defender\'s signed @state entry hashes to. Only a State ruling can be excused, by a proof that the committed leaf after the step is forcedLeaf(honest_post) (protocols/dispute/forced-leaf.ts)']
  },
  DisputeKind: { path: ['pallet_arbitration', 'types', 'DisputeKind'], variants: [{ name: 'SolverProof' }, { name: 'VerifierVerdict' }] },
  Party: { path: ['pallet_arbitration', 'types', 'Party'], variants: [{ name: 'Challenger' }, { name: 'Defender' }] },
  DisputeStatus: { path: ['pallet_arbitration', 'types', 'DisputeStatus'], variants: [{ name: 'Open' }, { name: 'ChallengerWon' }, { name: 'DefenderWon' }] },
  Resolution: { path: ['pallet_arbitration', 'types', 'Resolution'], variants: [{ name: 'Adjudicated' }, { name: 'Timeout' }] },
  Force: {
    path: ['pallet_arbitration', 'types', 'Force'],
    fields: [['to', 'Party'], ['seq', 'u32'], ['at', 'u32'], ['due', 'u32']],
    docs: ['A move forced on chain: party `to` must post dispute message `seq` (answer_move) by block `due`, or lose (claim_timeout)']
  },
  DisputeInfo: {
    path: ['pallet_arbitration', 'types', 'DisputeInfo'],
    fields: [
      ['task_id', 'u64'], ['challenger', 'AccountId'], ['defender', 'AccountId'], ['kind', 'DisputeKind'], ['disputed_step', 'u32'],
      ['bond', 'u128'], ['status', 'DisputeStatus'], ['opened_at', 'u32'], ['deadline', 'u32'],
      ['next_seq', 'u32'], ['last_hash', 'H256'], ['force', 'Option<Force>'], ['moves', 'u32']
    ],
    docs: ['deadline: past it with no force pending, the challenger loses; next_seq: one past the last message on chain (a force may not post an older one); last_hash: sha256 of that message\'s bytes; moves: messages posted on chain']
  },
  ArbitrationParams: {
    path: ['pallet_arbitration', 'types', 'Params'],
    fields: [
      ['min_stake', 'u128'], ['dispute_bond', 'u128'], ['dispute_clock', 'u32'], ['slash_ppm', 'u32'], ['winner_share_ppm', 'u32'],
      ['missed_deadline_slash_ppm', 'u32'], ['jackpot', 'u128'], ['forced_error_ppm', 'u32'], ['max_checkpoints', 'u32'],
      ['capacity_rent_ppb', 'u32'],
      ['max_task_memory', 'u64'], ['reference_flops_per_block', 'u64'],
      ['max_root_every', 'u32'],
      ['reference_block_price', 'u128']
    ],
    docs: ['reference_block_price: planck per block of reference work (a block of training at reference_flops_per_block); submit_task refuses a solver_reward below the program\'s training blocks at this price and a verifier_reward below one drawn verifier\'s replay blocks at it (protocols/scheduling/price.ts rewardFloor; 0: no floor)']
  },
  TensorDType: { path: ['pallet_arbitration', 'claim', 'TensorDType'], variants: [{ name: 'Float32' }, { name: 'Int32' }, { name: 'Bool' }] },
  SliceAxis: { path: ['pallet_arbitration', 'claim', 'SliceAxis'], variants: [{ name: 'Row' }, { name: 'Col' }] },
  TensorSpec: { path: ['pallet_arbitration', 'claim', 'TensorSpec'], fields: [['shape', 'Vec<u32>'], ['dtype', 'TensorDType']] },
  SliceProof: {
    path: ['pallet_arbitration', 'claim', 'SliceProof'],
    fields: SLICE_PROOF,
    docs: ['bytes: the whole leaf holding row (column) `index`: g = max(1, floor(2048 / bytes of one row (column))) consecutive rows (columns), columns each contiguous; siblings: the path of leaf floor(index / g) (tensor commitment v2)']
  },
  OpShape: {
    path: ['pallet_arbitration', 'claim', 'OpShape'],
    fields: [['kernel', 'str'], ['attrs', 'Vec<u8>'], ['inputs', 'Vec<TensorSpec>'], ['output', 'TensorSpec'], ['output_index', 'Option<u32>']],
    docs: ['attrs: canonical JSON (UTF-8, keys sorted) of the kernel attributes']
  },
  AdjudicationClaim: {
    path: ['pallet_arbitration', 'claim', 'AdjudicationClaim'],
    fields: [
      ['runtime', 'str'], ['op', 'OpShape'], ['flat_index', 'u32'], ['input_roots', 'Vec<H256>'], ['operands', 'Vec<SliceProof>'],
      ['challenger_output_root', 'H256'], ['challenger_row', 'SliceProof'], ['defender_output_root', 'H256'], ['defender_row', 'SliceProof']
    ]
  },
  ...AVAILABILITY_TYPES,
  ...DIVERGENCE_TYPES,
  ...ASSIGNMENT_TYPES,
  ...CHUNK_TYPES,
  ...RENT_TYPES,
  ...DRAW_TYPES,
  ...SERVE_TYPES,
  ...CHALLENGE_COMMIT_TYPES,
  ...DATASET_TYPES
}

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })

export const PALLETS: PalletSpec[] = [
  {
    name: 'System',
    index: 0,
    storage: [
      { name: 'Account', key: 'AccountId', hasher: 'Blake2_128Concat', type: 'AccountInfo', modifier: 'Default', docs: 'The full account information for a particular account ID.' },
      { name: 'BlockHash', key: 'u32', hasher: 'Twox64Concat', type: 'H256', modifier: 'Default', docs: 'Map of block numbers to block hashes.' },
      { name: 'Number', type: 'u32', modifier: 'Default', docs: 'The current block number being processed.' },
      { name: 'ParentHash', type: 'H256', modifier: 'Default', docs: 'Hash of the previous block.' },
      { name: 'Events', type: 'Vec<EventRecord>', modifier: 'Default', docs: 'Events deposited for the current block.' },
      { name: 'EventCount', type: 'u32', modifier: 'Default', docs: 'The number of events in the Events list.' }
    ],
    calls: [{ name: 'remark', index: 0, args: [['remark', 'Vec<u8>']], docs: 'Make some on-chain remark (no effect).' }],
    events: [
      { name: 'ExtrinsicSuccess', fields: [['dispatch_info', 'DispatchInfo']], docs: 'An extrinsic completed successfully.' },
      { name: 'ExtrinsicFailed', fields: [['dispatch_error', 'DispatchError'], ['dispatch_info', 'DispatchInfo']], docs: 'An extrinsic failed.' },
      { name: 'NewAccount', fields: [['account', 'AccountId']], docs: 'A new account was created.' },
      { name: 'KilledAccount', fields: [['account', 'AccountId']], docs: 'An account was reaped.' }
    ],
    errors: [err('InvalidSpecName', 'Unused on the dev chain.'), err('CallFiltered', 'The call is not allowed.')],
    constants: [
      { name: 'BlockHashCount', type: 'u32', docs: 'Maximum number of block number to block hash mappings to keep.' },
      { name: 'SS58Prefix', type: 'u16', docs: 'The SS58 address prefix.' },
      { name: 'Version', type: 'RuntimeVersion', docs: 'Get the chain\'s in-code version.' }
    ]
  },
  {
    name: 'Balances',
    index: 1,
    storage: [
      { name: 'TotalIssuance', type: 'u128', modifier: 'Default', docs: 'The total units issued in the system.' }
    ],
    calls: [
      { name: 'transfer_allow_death', index: 0, args: [['dest', 'MultiAddress'], ['value', 'Compact<u128>']], docs: 'Transfer some liquid free balance to another account.' },
      { name: 'transfer_keep_alive', index: 3, args: [['dest', 'MultiAddress'], ['value', 'Compact<u128>']], docs: 'Same as transfer_allow_death, but the sender stays above the existential deposit.' }
    ],
    events: [
      { name: 'Endowed', fields: [['account', 'AccountId'], ['free_balance', 'u128']], docs: 'An account was created with some free balance.' },
      { name: 'Transfer', fields: [['from', 'AccountId'], ['to', 'AccountId'], ['amount', 'u128']], docs: 'Transfer succeeded.' },
      { name: 'Reserved', fields: [['who', 'AccountId'], ['amount', 'u128']], docs: 'Some balance was reserved (moved from free to reserved).' },
      { name: 'Unreserved', fields: [['who', 'AccountId'], ['amount', 'u128']], docs: 'Some balance was unreserved (moved from reserved to free).' },
      { name: 'ReserveRepatriated', fields: [['from', 'AccountId'], ['to', 'AccountId'], ['amount', 'u128']], docs: 'Reserved balance of `from` moved to the free balance of `to`.' },
      { name: 'Slashed', fields: [['who', 'AccountId'], ['amount', 'u128']], docs: 'Some reserved amount was slashed into the treasury.' }
    ],
    errors: [
      err('InsufficientBalance', 'Balance too low to send value.'),
      err('ExistentialDeposit', 'Value too low to create account due to existential deposit.'),
      err('Expendability', 'Transfer/payment would kill account.'),
      err('InsufficientReserved', 'Not enough reserved balance.')
    ],
    constants: [{ name: 'ExistentialDeposit', type: 'u128', docs: 'The minimum amount required to keep an account open.' }]
  },
  {
    name: 'Arbitration',
    index: 2,
    storage: [
      { name: 'Params', type: 'ArbitrationParams', modifier: 'Default', docs: 'Economic and timing parameters set in genesis.' },
      { name: 'Nodes', key: 'AccountId', hasher: 'Blake2_128Concat', type: 'NodeInfo', modifier: 'Optional', docs: 'Registered nodes: libp2p peer id, roles bitmask (1 submitter, 2 solver, 4 verifier, 8 whistleblower), reserved stake.' },
      { name: 'Registered', type: 'Vec<AccountId>', modifier: 'Default', docs: 'All registered accounts (for solver selection).' },
      { name: 'PeerOwner', key: 'Vec<u8>', hasher: 'Blake2_128Concat', type: 'AccountId', modifier: 'Optional', docs: 'Which account registered a libp2p peer id.' },
      { name: 'NextTaskId', type: 'u64', modifier: 'Default', docs: 'Id of the next task.' },
      { name: 'Tasks', key: 'u64', hasher: 'Twox64Concat', type: 'TaskInfo', modifier: 'Optional', docs: 'Tasks by id.' },
      { name: 'OpenTasks', type: 'Vec<u64>', modifier: 'Default', docs: 'Tasks not yet settled (scanned in on_initialize for selection, timeouts and settlement).' },
      { name: 'NextDisputeId', type: 'u64', modifier: 'Default', docs: 'Id of the next dispute.' },
      { name: 'Disputes', key: 'u64', hasher: 'Twox64Concat', type: 'DisputeInfo', modifier: 'Optional', docs: 'Disputes by id.' },
      { name: 'DisputeLastMove', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<u8>', modifier: 'Optional', docs: 'The last dispute message posted on chain (CBOR {m, s, a}, protocols/dispute encodeSigned), while the dispute is open: what a forced answer must continue.' },
      ...AVAILABILITY_STORAGE,
      ...ASSIGNMENT_STORAGE,
      ...CHUNK_STORAGE,
      ...STAKE_STORAGE,
      ...RENT_STORAGE,
      ...SEGMENT_STORAGE,
      ...TAPE_QUEUE_STORAGE,
      ...DRAW_STORAGE,
      ...RERUN_COST_STORAGE,
      ...SERVE_STORAGE,
      ...CHALLENGE_COMMIT_STORAGE,
      ...DATASET_STORAGE,
      ...STATE_COMMITMENT_STORAGE,
      ...CAPABILITY_STORAGE
    ],
    calls: [
      { name: 'register_node', index: 0, args: [['peer_id', 'Vec<u8>'], ['roles', 'u8'], ['stake', 'u128'], ['peer_sig', 'Vec<u8>']], docs: 'Bind a libp2p peer id (UTF-8 string bytes) to the caller with a reserved stake. peer_sig: the peer\'s Ed25519 identity key signs "proofswarm/register-peer/v1:" ‖ genesis hash ‖ caller account (protocols/identity/peer-binding.ts).' },
      { name: 'add_stake', index: 1, args: [['amount', 'u128']], docs: 'Reserve more stake.' },
      { name: 'unregister', index: 2, args: [], docs: 'Leave; the stake is returned. Only without active tasks or disputes.' },
      { name: 'set_roles', index: 3, args: [['roles', 'u8']], docs: 'Change the roles bitmask.' },
      {
        name: 'submit_task',
        index: 4,
        args: [['program_hash', 'H256'], ['program', 'Vec<u8>'], ['dataset_root', 'H256'], ['skeleton_root', 'H256'], ['steps', 'u32'], ['checkpoint_every', 'u32'], ['escrow', 'u128'], ['solver_reward', 'u128'], ['verifier_reward', 'u128'], ['verifier_count', 'u32'], ['challenge_window', 'u32'], ['solve_timeout', 'u32']],
        docs: 'Post a training task; escrow is reserved. A solver is selected in the next block once verifier_count verifiers can answer for dispute_bond + solver_reward with free stake (AwaitingVerifierStake until then; TaskExpired after UnassignedTimeout blocks). `program` is the canonical program JSON (at most 16 KiB) that program_hash is the sha256 of; the task is refused unless the program is admissible (protocols/program/admissible.ts): every kernel of its training step has an element reference on its runtime and every batch input a data claim. Its step cost at the reference speed is stored (TaskStepCost): it prices the task\'s re-runs (tape allowances, the tape queue, the backing grace).'
      },
      { name: 'release_task', index: 5, args: [['task_id', 'u64']], docs: 'The selected solver hands the task back for a fee of dispute_bond from its stake (not a free re-roll of the selection and its forced-error draw); another solver is selected.' },
      { name: 'commit_proof', index: 6, args: [['task_id', 'u64'], ['proof_root', 'H256'], ['final_state_root', 'H256'], ['step_count', 'u32'], ['checkpoints', 'Vec<Vec<u8>>']], docs: 'The selected solver commits the root of per-step state roots and the checkpoint manifests.' },
      { name: 'submit_verdict', index: 7, args: [['task_id', 'u64'], ['accept', 'bool'], ['checked_steps', 'Vec<u32>']], docs: 'A verifier the chain assigned to the task (VerifiersAssigned; others: NotAssigned) reports its verdict by its assignment\'s deadline. An accepting verdict must list (0-based) every step of the verifier\'s own sample (SampleNotChecked), seeded by the hash of its assignment\'s seed_block; at most 1024 steps. On a task with roots every m > 1 steps (TaskRootEvery) checked_steps names segments j instead (a diverged proof\'s last step as unit ⌈step_count / m⌉), and the sample is of segments. A reject must be backed by the verifier\'s own dispute, availability challenge or initial-state claim by the same deadline, or it is void and the verifier counts as silent; a reject moves that deadline to at least this block + the backing grace, dispute_clock + rerun(checkpoint_every + m) (priced as a dispute\'s tape: force_move), in which the verifier alone may open its evidence after the window.' },
      { name: 'open_dispute', index: 8, args: [['task_id', 'u64'], ['defender', 'AccountId'], ['kind', 'DisputeKind'], ['disputed_step', 'u32']], docs: 'Challenge the solver\'s proof; a bond is reserved. The bisection runs off chain (signed messages over libp2p); the chain sees it again only for a force or the final claim. Deadline = opened_at + trace allowance + (MAX_SEQ + 1) × 2 × (dispute_clock + 1).' },
      { name: 'force_move', index: 9, args: [['dispute_id', 'u64'], ['theirs', 'Vec<u8>'], ['mine', 'Vec<u8>']], docs: 'A party that waited in vain for an answer posts the other side\'s last signed message (`theirs`; empty when it is DisputeLastMove) and its own next one (`mine`), both CBOR {m, s, a}; the other side must answer_move by due = now + dispute_clock (+ the trace allowance rerun((disputed_step mod checkpoint_every) + 1) for the defender\'s commit, where rerun(n) = min(ceil(n × solve_timeout / steps), ceil(2 × n × TaskStepCost / 10^6) + ceil(4 × 10^9 / reference_flops_per_block)), from the re-run\'s turn in the defender\'s TapeQueue; in a segment dispute the same allowance of the opened step for the challenger\'s answer to the commit, seq 3: its own tape of that step). The challenger\'s first force has both empty: it demands the commit. Checked: signatures over (genesis hash, task id, dispute id, role), author parity (even seq: defender), seq/prev linkage, seq not older than what is on chain, and that `mine` continues `theirs` (protocols/dispute/transcript.ts).' },
      { name: 'claim_timeout', index: 10, args: [['dispute_id', 'u64']], docs: 'Anyone: a force unanswered after its due block loses for its addressee; past the dispute deadline with no force pending, the challenger loses.' },
      { name: 'adjudicate', index: 11, args: [['dispute_id', 'u64'], ['claim', 'Vec<u8>']], docs: 'A party submits the claim that ends the bisection (CBOR, protocols/dispute/claim.ts, at most 64 KiB): one local fact about the defender\'s signed op trace with its proofs; the runtime checks it (re-executing at most one op element) and rules.' },
      { name: 'reveal_forced_error', index: 12, args: [['task_id', 'u64'], ['vrf_output', '[u8; 32]'], ['vrf_proof', '[u8; 64]'], ['exactness', 'Vec<u8>']], docs: 'The solver proves that a step ruled against it was a Truebit forced error: its sr25519 VRF (schnorrkel, context "proofswarm/forced-error/v1") over task id ‖ selection_seed (protocols/dispute/forced-error.ts), and `exactness` (CBOR {v: 2, path}, at most 4 KiB, protocols/dispute/forced-leaf.ts): the Merkle path, at the proof\'s depth, of the committed leaf after that step (leaf (step + 1) / m), which must be forcedLeaf(honest_post) = sha256("proofswarm/forced-leaf/v1" ‖ honest_post) for a State ruling\'s honest_post (the solver committed the marked leaf and continued from the honest state; an honest leaf is no forced mark, so a puppet\'s ruling on a fake @state entry cannot be excused). The draw is one VRF per pick (transcript task id ‖ selection_seed ‖ pick, 4 picks, each a forced error with probability forced_error_ppm at a uniform committed leaf that is not a checkpoint): the call reveals one pick\'s VRF (the chain tries each pick\'s transcript), so the other forced steps stay private; a solver calls once per forced step ruled on. Valid: no slash for the State rulings at that step with that honest_post, that step\'s part of the jackpot at settlement (after reveal_draw); other rulings there still await a reveal. Only before the ruling\'s reveal_deadline; again for rulings adjudicated at that step after its first reveal.' },
      { name: 'answer_move', index: 13, args: [['dispute_id', 'u64'], ['answer', 'Vec<u8>']], docs: 'The addressee of a force posts its answer (CBOR {m, s, a}) by the due block: message seq = force.seq, linked to and continuing the forced move (a query answered with the node, entry, roots or slice it names; a defender message with a query into it). Semantic contradictions are `lie` claims, not checked here.' },
      ...AVAILABILITY_CALLS,
      ...INITIAL_STATE_CALLS,
      ...DIVERGENCE_CALLS,
      ...CHUNK_CALLS,
      ...DRAW_CALLS,
      ...CHALLENGE_COMMIT_CALLS,
      ...AVAILABILITY_MANY_CALLS,
      ...DATASET_CALLS,
      ...CAPABILITY_CALLS
    ],
    events: [
      { name: 'NodeRegistered', fields: [['who', 'AccountId'], ['peer_id', 'Vec<u8>'], ['roles', 'u8'], ['stake', 'u128']], docs: '' },
      { name: 'StakeAdded', fields: [['who', 'AccountId'], ['amount', 'u128'], ['total', 'u128']], docs: '' },
      { name: 'NodeUnregistered', fields: [['who', 'AccountId'], ['returned', 'u128']], docs: '' },
      { name: 'RolesChanged', fields: [['who', 'AccountId'], ['roles', 'u8']], docs: '' },
      { name: 'TaskSubmitted', fields: [['task_id', 'u64'], ['submitter', 'AccountId'], ['escrow', 'u128']], docs: '' },
      { name: 'SolverSelected', fields: [['task_id', 'u64'], ['solver', 'AccountId'], ['deadline', 'u32']], docs: '' },
      { name: 'NoSolverAvailable', fields: [['task_id', 'u64']], docs: 'Retried every block.' },
      { name: 'SolverTimedOut', fields: [['task_id', 'u64'], ['solver', 'AccountId'], ['slashed', 'u128']], docs: '' },
      { name: 'TaskReleased', fields: [['task_id', 'u64'], ['solver', 'AccountId'], ['fee', 'u128']], docs: 'The solver handed the task back; `fee` (a dispute bond\'s worth of its stake) went to the treasury.' },
      { name: 'ProofCommitted', fields: [['task_id', 'u64'], ['solver', 'AccountId'], ['proof_root', 'H256'], ['randomness_block', 'u32'], ['challenge_end', 'u32']], docs: 'Verification randomness = hash of block `randomness_block` (System.BlockHash).' },
      { name: 'VerdictSubmitted', fields: [['task_id', 'u64'], ['verifier', 'AccountId'], ['accept', 'bool']], docs: '' },
      { name: 'DisputeOpened', fields: [['dispute_id', 'u64'], ['task_id', 'u64'], ['challenger', 'AccountId'], ['defender', 'AccountId'], ['kind', 'DisputeKind'], ['disputed_step', 'u32']], docs: '' },
      { name: 'MoveForced', fields: [['dispute_id', 'u64'], ['by', 'AccountId'], ['seq', 'u32'], ['due', 'u32'], ['theirs', 'Vec<u8>'], ['mine', 'Vec<u8>']], docs: 'A force: the other party must post message `seq` by block `due`; the posted messages in full.' },
      { name: 'MoveAnswered', fields: [['dispute_id', 'u64'], ['by', 'AccountId'], ['seq', 'u32'], ['answer', 'Vec<u8>']], docs: 'A forced move answered on chain, in full.' },
      { name: 'Adjudicated', fields: [['dispute_id', 'u64'], ['kind', 'Vec<u8>'], ['reason', 'Vec<u8>']], docs: 'The claim kind (UTF-8) and the ruling\'s reason (UTF-8).' },
      { name: 'DisputeResolved', fields: [['dispute_id', 'u64'], ['winner', 'AccountId'], ['loser', 'AccountId'], ['how', 'Resolution'], ['slashed', 'u128'], ['forced_error', 'bool']], docs: '' },
      { name: 'Slashed', fields: [['who', 'AccountId'], ['amount', 'u128'], ['to_winner', 'u128'], ['to_treasury', 'u128']], docs: '' },
      { name: 'JackpotPaid', fields: [['task_id', 'u64'], ['dispute_id', 'u64'], ['who', 'AccountId'], ['amount', 'u128']], docs: 'At settlement: one share of a forced error\'s part of the jackpot (min(jackpot, solver_reward), paid out of the solver\'s reward, split equally across the draw\'s forced steps) per distinct challenger of a ruling the reveal excused that the chain drew as a verifier of the task with a sample holding the forced step (its segment at m > 1); other challengers get their bond back only.' },
      { name: 'ForcedErrorRevealed', fields: [['task_id', 'u64'], ['solver', 'AccountId'], ['step', 'u32'], ['excused', 'Vec<u64>']], docs: 'The solver proved that `step` was its forced error: no slash for the rulings of disputes `excused` (State rulings whose honest post-state the committed leaf after `step` is the forced mark of); other rulings at that step still await a reveal.' },
      { name: 'SolverPenalized', fields: [['task_id', 'u64'], ['dispute_id', 'u64'], ['slashed', 'u128']], docs: 'No forced-error reveal for a ruling before its reveal_deadline: the solver is slashed (a share to the challenger) and the task fails.' },
      { name: 'VerdictSlashed', fields: [['task_id', 'u64'], ['verifier', 'AccountId'], ['step', 'u32'], ['slashed', 'u128']], docs: 'A verifier accepted a proof whose revealed forced step it listed (step: that step), or whose initial state challenge_initial_state showed wrong (step 0). A dispute ruling slashes no verdict.' },
      { name: 'TaskSettled', fields: [['task_id', 'u64'], ['success', 'bool'], ['solver_paid', 'u128'], ['verifiers_paid', 'u128'], ['refunded', 'u128']], docs: '' },
      ...AVAILABILITY_EVENTS,
      { name: 'VerificationExtended', fields: [['task_id', 'u64'], ['challenge_end', 'u32'], ['standing', 'u32']], docs: 'The challenge window ended with fewer than verifier_count standing verdicts: it runs again (at most MaxVerifyExtensions times).' },
      { name: 'TaskUnverified', fields: [['task_id', 'u64'], ['standing', 'u32'], ['refunded', 'u128']], docs: 'No quorum of standing verdicts after every extension: the solver is not paid (nor slashed), the submitter gets its escrow back less the verdicts that stood.' },
      ...INITIAL_STATE_EVENTS,
      { name: 'TimeoutPenalty', fields: [['task_id', 'u64'], ['solver', 'AccountId'], ['slashed', 'u128'], ['to_challenger', 'u128']], docs: 'A solver let a forced move go unanswered: slashed like a lost claim, the challenger\'s share capped at its bond, no verdict slashed.' },
      ...DIVERGENCE_EVENTS,
      ...ASSIGNMENT_EVENTS,
      ...CHUNK_EVENTS,
      ...STAKE_EVENTS,
      ...RENT_EVENTS,
      ...DRAW_EVENTS,
      { name: 'TaskFaulted', fields: [['task_id', 'u64'], ['reason', 'Vec<u8>'], ['refunded', 'u128']], docs: 'The task\'s step of on_initialize threw (a runtime fault): its writes of the block were dropped and it is quarantined (phase Faulted): escrow `refunded` to the submitter, capacity rent paid as at every end, stake bindings released, answered deposits back to their requesters; nobody paid or slashed by it. Its open disputes and held requests run on, and a ruling against the solver keeps its reveal window and penalty (the task stays in OpenTasks, its solver bound, until none is left). `reason`: the error (UTF-8, at most 256 bytes); 0 refunded when even the quarantine failed.' },
      ...SERVE_EVENTS,
      ...CHALLENGE_COMMIT_EVENTS,
      ...DATASET_EVENTS,
      ...CAPABILITY_EVENTS
    ],
    errors: [
      err('NotRegistered', 'The caller (or the named account) is not a registered node.'),
      err('AlreadyRegistered', 'The caller is already registered.'),
      err('PeerIdTaken', 'Another account registered this peer id.'),
      err('InvalidPeerId', 'The peer id is empty, too long or not printable ASCII.'),
      err('InvalidRoles', 'Roles must be a non-zero bitmask of known roles.'),
      err('InsufficientStake', 'Stake below the minimum, or the free balance cannot cover it.'),
      err('HasActiveTasks', 'The node still has tasks or disputes in progress.'),
      err('TaskNotFound', 'No task with this id.'),
      err('InvalidTaskParams', 'A task parameter is zero or out of range.'),
      err('InsufficientEscrow', 'Escrow below solver_reward + verifier_reward * verifier_count, or not enough free balance.'),
      err('WrongPhase', 'The task or dispute is not in the phase this call needs.'),
      err('NotSelectedSolver', 'The caller is not the task\'s selected solver.'),
      err('DeadlineMissed', 'The solver\'s deadline has passed.'),
      err('NotVerifier', 'The caller is not registered with the verifier role.'),
      err('AlreadyVoted', 'This verifier already submitted a verdict.'),
      err('VerifiersFull', 'The task already has 64 verdicts that are not void.'),
      err('SolverCannotVerify', 'The solver cannot verify or challenge its own task.'),
      err('InvalidStep', 'Step out of range.'),
      err('TooManyCheckpoints', 'More checkpoint manifests than max_checkpoints, or more than 16 KiB of them together.'),
      err('ChallengeWindowClosed', 'The challenge window of the task has ended (for evidence: and the caller is no assigned verifier backing its reject in its grace).'),
      err('InvalidDefender', 'The defender is not the solver (SolverProof) or a verifier who accepted (VerifierVerdict).'),
      err('DisputeNotFound', 'No dispute with this id.'),
      err('DisputeClosed', 'The dispute is already resolved.'),
      err('NotParty', 'The caller is not a party of the dispute.'),
      err('NotAddressee', 'No force is pending against the caller.'),
      err('InvalidMove', 'A dispute message is malformed, not signed by its party for this chain, task, dispute and role, of the wrong author parity, or of another step.'),
      err('NotExpired', 'The pending force\'s due block, or (none pending) the dispute deadline, has not passed.'),
      err('InvalidClaim', 'The claim is malformed (shapes, indices, operand list).'),
      err('InvalidProof', 'A Merkle proof in the claim does not verify.'),
      err('UnsupportedKernel', 'The reference semantics do not support this kernel/runtime.'),
      err('ElementsAgree', 'Both parties claim the same element value: nothing to adjudicate there.'),
      err('Overflow', 'Arithmetic overflow.'),
      err('InvalidVrfProof', 'The forced-error VRF proof is not the solver\'s over one of this task\'s pick transcripts (task id, selection seed, pick), or reveal_draw did not give every pick in order.'),
      err('NoForcedError', 'The revealed pick orders no forced error for this task.'),
      err('NoRulingAtForcedStep', 'No SolverProof ruling at the revealed pick\'s forced step.'),
      err('RevealTooLate', 'The reveal deadline of the ruling at the forced step has passed: the solver was already penalized.'),
      err('AlreadyRevealed', 'The forced error at the revealed pick\'s step was already revealed and no ruling at that step awaits a reveal.'),
      err('DisputeTheProof', 'A verdict is wrong iff the proof is wrong at a step it checked: open a SolverProof dispute against the solver instead (the accepts of a proof ruled wrong go unpaid).'),
      ...AVAILABILITY_ERRORS,
      // appended after the availability errors so that earlier error indices stay put
      err('RandomnessNotReady', 'An accepting verdict must list the verifier\'s sample, drawn from the hash of its assignment\'s seed_block (committed_at + 1 in round 0): submit it after that block.'),
      err('SampleNotChecked', 'An accepting verdict\'s checked_steps must contain the verifier\'s own sample (protocols/verification/verdict.ts requiredSample: sampleSteps(hash of its assignment\'s seed_block, verifier account, step_count, min(samplesPerVerifier(verifier_count), 1024)), step s listed as s-1; with roots every m > 1 steps segments: sampleSegments, segment j listed as j).'),
      err('IncompleteProof', 'commit_proof: step_count must be the task\'s steps.'),
      err('SubmitterCannotVerify', 'The task\'s submitter cannot submit a verdict on it.'),
      err('ProgramHashMismatch', 'The program bytes do not hash (sha256) to program_hash.'),
      err('InvalidProgram', 'The program bytes are not a valid canonical task program of at most 16 KiB (protocols/program: validateProgram, programBytes).'),
      err('ProgramNotVerifiable', 'The program is not admissible: its runtime has no element reference for a kernel its training step emits, or a batch input has no data claim, so its disputes could not be adjudicated (protocols/program/admissible.ts).'),
      err('ProgramMismatch', 'The task\'s steps or checkpoint_every differ from the program\'s: an honest solver could not commit the proof the chain asks for.'),
      err('UnsupportedPeerId', 'Only Ed25519 libp2p peer ids (12D3KooW…) can be bound: their public key is in the id.'),
      err('PeerKeyNotProven', 'peer_sig is not the peer key\'s signature over "proofswarm/register-peer/v1:" ‖ genesis hash ‖ caller account.'),
      err('ForcePending', 'A force is already pending: answer it, or wait for it to be answered or to time out.'),
      err('StaleMove', 'A force may not post a message older than, or different from, what is on chain at that seq.'),
      err('NotAnAnswer', 'The move does not continue the previous one: wrong seq or prev hash, or not of the kind asked for (protocols/dispute/transcript.ts).'),
      ...INITIAL_STATE_ERRORS,
      err('NotExactForcedError', 'The proof does not show the committed leaf after the forced step to be forcedLeaf of a State ruling\'s honest post-state (protocols/dispute/forced-leaf.ts).'),
      err('RulingNotExcusable', 'No ruling awaiting a reveal at the forced step was adjudicated on a State claim: a forced error marks the committed leaf of an honest post-state, so the honest challenger\'s claim about it is a State claim.'),
      ...DIVERGENCE_ERRORS,
      ...ASSIGNMENT_ERRORS,
      ...CHUNK_ERRORS,
      ...RENT_ERRORS,
      ...FEASIBILITY_ERRORS,
      ...SEGMENT_ERRORS,
      ...WINDOW_ERRORS,
      ...DRAW_ERRORS,
      ...PRICE_ERRORS,
      ...FORCED_ROOM_ERRORS,
      ...SERVE_ERRORS,
      ...CHALLENGE_COMMIT_ERRORS,
      ...AVAILABILITY_NEED_ERRORS,
      ...DATASET_ERRORS,
      ...CAPABILITY_ERRORS
    ],
    constants: [
      { name: 'RevealWindow', type: 'u32', value: REVEAL_WINDOW, docs: 'Blocks a solver has, after a SolverProof dispute is adjudicated against it, to reveal that the step was its forced error; and after DrawRequested, to reveal its draw (reveal_draw).' },
      { name: 'MaxVerifyExtensions', type: 'u32', value: MAX_VERIFY_EXTENSIONS, docs: 'Times the challenge window is extended when it ends without verifier_count standing verdicts.' },
      { name: 'VerifierSlashPpm', type: 'u32', value: VERIFIER_SLASH_PPM, docs: 'Share of its stake (ppm) a verifier loses when a proof it accepted is ruled wrong at a step it reported checked.' },
      { name: 'MaxTaskPeriod', type: 'u32', value: MAX_TASK_PERIOD, docs: 'The longest solve_timeout or challenge_window submit_task takes (InvalidTaskParams above): the deadlines derived from them stay u32 block numbers.' },
      { name: 'UnassignedTimeout', type: 'u32', value: UNASSIGNED_TIMEOUT, docs: 'Blocks a task may stay Unassigned (no solver, or too little verifier stake to answer for it) before it expires with a full refund (TaskExpired).' }
    ]
  },
  {
    name: 'Randomness',
    index: 3,
    storage: [
      { name: 'Author', type: 'H256', modifier: 'Optional', docs: 'The block author\'s sr25519 public key: every block\'s randomness is its VRF (context "proofswarm/randomness/v1", protocols/randomness.ts), carried in the header\'s pre-runtime digest (engine "psrn": pre-output ‖ proof).' },
      { name: 'Current', type: 'H256', modifier: 'Default', docs: 'The randomness of the newest block (at genesis: sha256("proofswarm/randomness/genesis" ‖ author)); block n\'s VRF is over this value and n.' },
      { name: 'ByBlock', key: 'u32', hasher: 'Twox64Concat', type: 'H256', modifier: 'Optional', docs: 'Randomness of block n = sha256("proofswarm/randomness/value" ‖ its VRF pre-output). Seeds solver selection (the block including submit_task), verifier draws and samples, availability and chunk samples.' }
    ],
    calls: [],
    events: [],
    errors: [],
    constants: []
  }
]
