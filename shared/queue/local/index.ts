/**
 * # The durable local queue
 *
 * Local mode's stand-in for SQS, and the edge agent's durable queue: sources `send` events and are
 * answered once the events are on disk (so the audit API's 202 survives `kill -9` and a power
 * loss); each consumer group (one per destination) receives batches in the SQS event shape, like a
 * Lambda behind SQS with a batch size and a batching window, and answers with `batchItemFailures`.
 * Failed messages come back with backoff; after `maxReceiveCount` attempts they go to the group's
 * dead-letter folder. What the rest of Svc uses is exported below; the files beside this one are
 * its parts:
 *
 *   queue.ts          LocalEventQueue: send, capacity, stats, start and stop
 *   group.ts          what a consumer group is: its options, its handler, its stats
 *   consumer.ts       a group's delivery loop: batches, windows, settling, backoff, outages
 *   delivery.ts       a delivery's SQS shape (DeliveredRecord, DeliveryShape)
 *   dead-letters.ts   the dead-letter files and their replay (`svc dlq replay`)
 *   storage-faults.ts the write failures a health check reports
 *   journal.ts        the journal: appends, leases, settles, segment rotation and deletion
 *   records.ts        the records held in memory and the files' names and line formats
 *   held-tail.ts      the in-memory tail of the hand-off
 *   ack-logs.ts       the acknowledgement logs and their periodic sync
 *   recovery.ts       what opening the journal reads back
 *   append-log.ts     framed records, whole appends or none, group commits
 *   lock.ts           one process per directory
 *
 * ## Records
 *
 * Every line of every file is a framed record, `<payload bytes> <crc32, 8 hex> <payload>\n`
 * (append-log.ts); a payload never holds a newline. A message is one record of a segment, numbered
 * by `seq` (1, 2, … in the order of appends; the numbering starts at 1 again once no segment is
 * left): `m <seq> <events> <body>`, the body as it is (it is JSON itself: wrapping it in JSON again
 * cost a second escaping pass per write and a parse per replay). A record for some groups only (a
 * replayed dead letter) or a body with a newline is written as JSON `{s: seq, g?: groups, n: events,
 * b: body}`, which is also the form of Svc ≤ 15.0.0's records, still read, as are its unframed lines.
 * A body packs one or more events (codec.ts); the queue counts events, not messages, against its
 * capacity.
 *
 * ## Segments
 *
 * Messages are appended to `segment-<12 digits>.log`, a new one every 64 MiB and at every start, so
 * a segment read back at start is never appended to. Appends made together (one send's messages,
 * the edge's round) and those made while a write is under way share one write (GroupCommit). A
 * segment is deleted as a whole once every group has settled every message in it; nothing is
 * truncated in place.
 *
 * ## Syncs
 *
 * The segments are opened with O_DSYNC: an append resolves once its data is on disk, and that is the
 * promise behind the audit API's 202; a new segment's name is synced too (its directory). The
 * acknowledgement logs are written WITHOUT a sync per delivery: a lease or an outcome resolves once
 * its line is written (in the page cache, so a process crash, even `kill -9`, keeps it), and each
 * ack log written to is fdatasynced at most once per second (ACK_SYNC_MS), and at close. A power loss
 * can therefore lose up to a second of outcomes; those messages are delivered again, which the
 * destinations tolerate (idempotent by event id: nothing is lost and nothing is written twice; only
 * a file destination's batch handed out in that second may be regrouped). A synced outcome per
 * delivery was one of three synced writes per audit request. Nothing else waits for the ack logs to
 * be synced, by choice (segment deletion, the dead-letter move, the ack logs' rewrite at open): no
 * step takes a decision a lost outcome line could make wrong.
 *
 * A write that fails (a full disk, an I/O error) is rolled back to the last whole record before
 * anything else is appended, and rejects with QueueStorageError: nothing of a refused send is kept,
 * and the queue reports the fault (storage-faults.ts) until a later write of the same log succeeds.
 *
 * ## Acknowledgements
 *
 * One log per group, `acks-<group>.log`: `a <seq>` acknowledged, `f <seq>` a failed attempt, `d <seq>`
 * dead-lettered (counts as acknowledged), `l <seq> <seq> …` a batch handed to the group (a lease:
 * only for groups with `stableBatches`, the file destinations, which name their output after the
 * batch). A message is pending for a group until its `a` or `d` line is written; its `f` lines count
 * its attempts for the backoff and for `maxReceiveCount`. A destination that cannot be reached
 * (DestinationUnavailableError) counts no attempt: the group pauses, with backoff, and the queue
 * keeps taking events up to its capacity.
 *
 * ## Recovery
 *
 * A directory is held by one process at a time (lock.ts: a socket the OS frees however its holder
 * dies). Opening it reads every segment and ack log and checks every record: an unterminated last
 * record is a write a crash interrupted before it was synced (so before anything was acknowledged)
 * and is cut off; any other record that fails its check is damage, reported with its offset,
 * counted, copied to `damaged/`, and skipped, and the records after it are recovered. Every message
 * not acknowledged by a group is pending for it again, with its failed attempts; a batch leased and
 * never settled is delivered again first, exactly as it was. Then the segments every group settled
 * are deleted and each ack log is rewritten with only what still matters.
 *
 * ## The in-memory hand-off
 *
 * A message appended by this process reaches its consumers with the events it was encoded from, so
 * they are not parsed back from the text just written (JSON.parse of a 2 KB audit event costs about
 * as much as encoding it, and its objects are new garbage). The journal holds them with the most
 * recent records (held-tail.ts: up to 8 MiB of bodies, and a record leaves as soon as every group
 * settled it), and a delivery carries them beside its records, one entry per record (delivery.ts
 * HandedOff); a record read back from disk after a restart, or one the tail let go of, is parsed. Both pass the same
 * validation (codec.ts `decodeRecord`), so a consumer takes nothing it would refuse after a restart.
 * The sender must not change the events once sent (port.ts).
 *
 * ## Dead letters
 *
 * A message out of attempts is written, with why, to `dead-letters/<group>/<seq, 12 digits>.json`;
 * the file and its name are synced before the `d` line is written. `svc dlq replay` appends it again
 * for its group alone, with a directory no running Svc holds.
 */
export { AppendLog, frame, readRecords } from './append-log.js';
export { DEAD_LETTER_DIR, type DeadLetter, replayDeadLetters } from './dead-letters.js';
export type { HandedOff, LocalDelivery } from './delivery.js';
export {
  type ConsumerGroup,
  DestinationUnavailableError,
  type GroupStats,
  type LocalBatchResponse,
  type SqsBatchHandler,
} from './group.js';
export { QueueLockedError } from './lock.js';
export { LocalEventQueue, type LocalQueueOptions } from './queue.js';
export type { StorageFault } from './storage-faults.js';
