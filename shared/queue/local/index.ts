/**
 * The durable local queue: local mode's stand-in for SQS, and the edge agent's durable queue. What
 * the rest of Svc uses of it is exported here; the files beside this one are its parts.
 */
export { AppendLog, frame, readRecords } from './append-log.js';
export { QueueLockedError } from './lock.js';
export {
  type ConsumerGroup,
  DEAD_LETTER_DIR,
  type DeadLetter,
  DestinationUnavailableError,
  type GroupStats,
  type LocalBatchResponse,
  LocalEventQueue,
  type LocalQueueOptions,
  replayDeadLetters,
  type SqsBatchHandler,
  type StorageFault,
} from './queue.js';
