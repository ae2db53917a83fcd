/** `store`: the embedded SQLite store (history, the read API and its pages; docs/store.md). */
import { Bool, Int, Section, Str } from '../builders.js';

export const store = Section(
  'The embedded store: an SQLite database (node:sqlite) that keeps what Svc receives and polls, for the history pages and the read API under /api/v1/ of the web view. Fed from the durable queue like any destination, so a slow store never slows a source. Used by svc local, svc edge and svc demo; the writer Lambdas of the cloud never use it',
  {
    enable: Bool(true, 'Keep history in the embedded store'),
    path: Str(
      './data/store/svc.db',
      'The database file (its -wal and -shm files sit beside it); relative paths resolve from the working directory',
      { minLength: 1 },
    ),
    retentionDays: Int(30, 1, 3650, 'Days of history kept; older rows are deleted once an hour'),
    rawHealthHours: Int(
      48,
      1,
      720,
      'Hours for which every health and session sample is kept as polled; older ones are kept as 5-minute minimum, mean and maximum',
    ),
    maxSizeMB: Int(
      0,
      0,
      10_000_000,
      'Largest size of the database in MB (0 = no limit); above it, the oldest data is deleted first until it fits',
    ),
  },
);
