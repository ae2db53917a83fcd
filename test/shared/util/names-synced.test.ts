/**
 * A file's fsync makes its data durable, not its name: the directory must be synced too, or a power
 * loss can undo a rename or take a new file whole. No power loss can be staged here, so these tests
 * watch the system calls of a real child process (the built dist/ code) with strace: the directory
 * is opened and fsynced after the rename, after a new queue segment is created and before the
 * first message is written into it, once per batch of the per-event JSON files, after the last, and
 * the parent of every folder Svc creates.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditQueued } from '../../support/audit.js';
import { REPO_ROOT } from '../../support/build.js';

const SCRIPT = `
const files = await import(process.env.FILES_MODULE);
const { Journal } = await import(process.env.JOURNAL_MODULE);
const dir = process.env.WORK_DIR;
files.writeFileAtomically(dir + '/atomic/state.txt', 'one');
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const journal = await Journal.open(dir + '/queue', ['g'], silent);
await journal.append('{"kind":"points","points":[]}', 1);
await journal.close();
const { JsonObjectDataWriter } = await import(process.env.JSON_WRITER_MODULE);
const { JsonObjectDataDestination } = await import(process.env.JSON_DESTINATION_MODULE);
const destination = new JsonObjectDataDestination(new JsonObjectDataWriter({ enable: true, exportDirectory: dir + '/json', staticTags: [] }), silent);
const again = await destination.write(JSON.parse(process.env.AUDIT_EVENTS));
if (again.size > 0) throw new Error('the JSON destination did not write every event');
`;

interface Call {
  name: string;
  args: string;
  result: string;
}

const withObjectData = () =>
  auditQueued({ type: 'object.visibility.changed', payload: { event: { objectData: { qId: 'obj1' } } } });
const JSON_EVENTS = [withObjectData(), withObjectData(), withObjectData()];

/** Runs the script under strace; its calls in order (every thread, unfinished calls joined). */
function traced(dir: string): Call[] {
  const out = join(dir, 'trace.txt');
  const run = spawnSync(
    'strace',
    [
      '-f',
      '-qq',
      '-e',
      'trace=openat,mkdir,mkdirat,fsync,fdatasync,rename,renameat,renameat2,link,linkat,write,pwrite64,writev,pwritev,pwritev2',
      '-o',
      out,
      process.execPath,
      '--input-type=module',
      '-e',
      SCRIPT,
    ],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        FILES_MODULE: pathToFileURL(join(REPO_ROOT, 'dist/shared/util/files.js')).href,
        JOURNAL_MODULE: pathToFileURL(join(REPO_ROOT, 'dist/shared/queue/local/journal.js')).href,
        JSON_WRITER_MODULE: pathToFileURL(join(REPO_ROOT, 'dist/shared/destinations/json/writer.js')).href,
        JSON_DESTINATION_MODULE: pathToFileURL(join(REPO_ROOT, 'dist/shared/destinations/json/destination.js')).href,
        AUDIT_EVENTS: JSON.stringify(JSON_EVENTS),
        WORK_DIR: dir,
      },
    },
  );
  expect(run.status, run.stderr).toBe(0);
  const unfinished = new Map<string, string>();
  const calls: Call[] = [];
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    const start = /^(\d+)\s+(\w+)\((.*) <unfinished \.\.\.>$/.exec(line);
    if (start) {
      unfinished.set(`${start[1]} ${start[2]}`, start[3] ?? '');
      continue;
    }
    const resumed = /^(\d+)\s+<\.\.\. (\w+) resumed>(.*)\)\s+= (.*)$/.exec(line);
    if (resumed) {
      const key = `${resumed[1]} ${resumed[2]}`;
      calls.push({
        name: resumed[2] ?? '',
        args: (unfinished.get(key) ?? '') + (resumed[3] ?? ''),
        result: resumed[4] ?? '',
      });
      unfinished.delete(key);
      continue;
    }
    const whole = /^\d+\s+(\w+)\((.*)\)\s+= (.*)$/.exec(line);
    if (whole) calls.push({ name: whole[1] ?? '', args: whole[2] ?? '', result: whole[3] ?? '' });
  }
  return calls;
}

/** The position of the first call at or after `from` that matches, or -1. */
function find(calls: readonly Call[], from: number, match: (call: Call) => boolean): number {
  for (let i = Math.max(from, 0); i < calls.length; i++) if (match(calls[i] as Call)) return i;
  return -1;
}

const fdOf = (call: Call | undefined): string => call?.result.split(' ')[0] ?? '';
const firstArg = (call: Call): string => call.args.split(',')[0] ?? '';

/** The index of an fsync of `path` opened as a directory, after `from`; -1 when there is none. */
function directorySynced(calls: readonly Call[], from: number, path: string): number {
  const open = find(
    calls,
    from,
    (c) => c.name === 'openat' && c.args.includes(`"${path}"`) && c.args.includes('O_DIRECTORY'),
  );
  if (open < 0) return -1;
  const fd = fdOf(calls[open]);
  return find(calls, open, (c) => c.name === 'fsync' && firstArg(c) === fd);
}

describe('names made durable (strace of a real process)', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'names-synced-')));
  let calls: Call[] = [];
  beforeAll(() => {
    calls = traced(dir);
  });

  it('syncs the directory after writeFileAtomically renames its temporary file into place', () => {
    const rename = find(calls, 0, (c) => c.name.startsWith('rename') && c.args.includes(`"${dir}/atomic/state.txt"`));
    expect(rename).toBeGreaterThanOrEqual(0);
    expect(directorySynced(calls, rename, `${dir}/atomic`)).toBeGreaterThan(rename);
  });

  it('syncs the queue directory after creating a segment, before the first message is written into it', () => {
    const segment = find(
      calls,
      0,
      (c) => c.name === 'openat' && /segment-\d{12}\.log/.test(c.args) && c.args.includes('O_CREAT'),
    );
    expect(segment).toBeGreaterThanOrEqual(0);
    const fd = fdOf(calls[segment]);
    const firstWrite = find(calls, segment, (c) => /^p?writev?2?6?4?$/.test(c.name) && firstArg(c) === fd);
    expect(firstWrite).toBeGreaterThan(segment);
    const synced = directorySynced(calls, segment, `${dir}/queue`);
    expect(synced).toBeGreaterThan(segment);
    expect(synced).toBeLessThan(firstWrite);
  });

  it('syncs the folder of the per-event JSON files once per batch, after the last file is linked into place', () => {
    const links = calls.flatMap((c, i) => (c.name.startsWith('link') && c.args.includes(`"${dir}/json/`) ? [i] : []));
    expect(links).toHaveLength(JSON_EVENTS.length);
    const last = links.at(-1) ?? -1;
    const opens = calls.filter(
      (c) => c.name === 'openat' && c.args.includes(`"${dir}/json"`) && c.args.includes('O_DIRECTORY'),
    );
    expect(opens).toHaveLength(1);
    expect(directorySynced(calls, last, `${dir}/json`)).toBeGreaterThan(last);
  });

  it("syncs the parent of every folder it creates (the atomic file's, the queue's, the JSON files'), before anything is written into it", () => {
    for (const name of ['atomic', 'queue', 'json']) {
      const made = find(
        calls,
        0,
        (c) => c.name.startsWith('mkdir') && c.args.includes(`"${dir}/${name}"`) && c.result.startsWith('0'),
      );
      expect(made, name).toBeGreaterThanOrEqual(0);
      const firstInside = find(calls, made, (c) => c.name === 'openat' && c.args.includes(`"${dir}/${name}/`));
      expect(firstInside, name).toBeGreaterThan(made);
      const synced = directorySynced(calls, made, dir);
      expect(synced, name).toBeGreaterThan(made);
      expect(synced, name).toBeLessThan(firstInside);
    }
  });
});
