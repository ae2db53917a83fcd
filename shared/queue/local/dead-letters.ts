/**
 * Dead letters: a message a consumer group failed `maxReceiveCount` times leaves the queue for a
 * file of its own in the group's dead-letter folder, saying why, until `svc dlq replay` puts it back.
 */
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Log } from '../../logging/log.js';
import { syncDirectory, writeFileSynced } from '../../util/files.js';
import { Journal } from './journal.js';
import type { JournalRecord } from './records.js';

/** The folder, under the queue's directory, of one sub-folder of dead letters per consumer group. */
export const DEAD_LETTER_DIR = 'dead-letters';

/** One dead letter's file: the message as it was written, and why and when it died. */
export interface DeadLetter {
  group: string;
  seq: number;
  attempts: number;
  deadAt: string;
  reason: string;
  events: number;
  body: string;
}

/**
 * Moves a message to the dead-letter folder of `group` under `directory`; false (and it stays
 * pending) when the file cannot be written. The letter and its name (the folder's fsync) are synced
 * before its `d` line is written, and that line needs no sync of its own: lost in a power loss, the
 * message is pending again, delivered again, and dead-lettered again under the same file name.
 */
export function writeDeadLetter(
  directory: string,
  group: string,
  record: JournalRecord,
  attempts: number,
  reason: string,
  log: Log,
): boolean {
  const letter: DeadLetter = {
    group,
    seq: record.seq,
    attempts,
    deadAt: new Date().toISOString(),
    reason,
    events: record.events,
    body: record.body,
  };
  const path = join(directory, DEAD_LETTER_DIR, group, `${String(record.seq).padStart(12, '0')}.json`);
  try {
    writeFileSynced(path, `${JSON.stringify(letter, null, 2)}\n`);
    syncDirectory(dirname(path));
  } catch (err) {
    log.error(
      { group, seq: record.seq, err, file: path },
      `cannot write the dead letter ${path}; the message stays in the queue`,
    );
    return false;
  }
  log.error(
    { group, seq: record.seq, attempts, events: record.events, file: path },
    `message moved to the dead-letter folder of ${group} after ${attempts} attempts (replay with \`svc dlq replay\`)`,
  );
  return true;
}

/**
 * Puts dead letters back on the queue for their group (`svc dlq replay`). Needs the queue's
 * directory not to be in use by a running Svc. Returns how many messages were replayed.
 */
export async function replayDeadLetters(
  directory: string,
  log: Log,
  only?: string,
): Promise<{ group: string; messages: number; events: number }[]> {
  // Every group the journal knows (its ack logs), so compaction keeps what any of them still needs.
  const groups = existsSync(directory)
    ? readdirSync(directory).flatMap((f) => /^acks-(.+)\.log$/.exec(f)?.[1] ?? [])
    : [];
  if (only && !groups.includes(only)) return [];
  const journal = await Journal.open(directory, groups, log);
  const results: { group: string; messages: number; events: number }[] = [];
  try {
    for (const group of groups) {
      if (only && group !== only) continue;
      const dir = join(directory, DEAD_LETTER_DIR, group);
      let files: string[];
      try {
        files = readdirSync(dir)
          .filter((f) => f.endsWith('.json'))
          .sort();
      } catch {
        continue;
      }
      let messages = 0;
      let events = 0;
      for (const file of files) {
        const letter = parseDeadLetter(readFileSync(join(dir, file), 'utf8'));
        if (!letter) continue;
        await journal.append(letter.body, letter.events, [group]);
        unlinkSync(join(dir, file));
        messages += 1;
        events += letter.events;
      }
      results.push({ group, messages, events });
    }
  } finally {
    await journal.close();
  }
  return results;
}

/** The body and event count of a dead letter's file; null when it is not one. */
function parseDeadLetter(text: string): { body: string; events: number } | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const body = 'body' in value ? value.body : undefined;
    const events = 'events' in value ? value.events : undefined;
    return typeof body === 'string' && typeof events === 'number' ? { body, events } : null;
  } catch {
    return null;
  }
}
