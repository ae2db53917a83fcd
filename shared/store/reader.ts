/**
 * The read API's connection to the store: the store file opened READ-ONLY on the main thread (the
 * writer holds the read-write connection, in WAL mode, so reads never block it and always see whole
 * transactions), opened lazily on the first read. Until the file and its tables exist (Svc has just
 * started, the writer has not written yet), reads run on an empty in-memory store of the same
 * tables, so every endpoint answers as an empty store; the file is looked for again at each read.
 * Prepared statements are cached per connection (queries/common.ts) and go with it on close.
 */
import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { STORE_DDL } from './ddl.js';

export class StoreReader {
  private file: DatabaseSync | undefined;
  private empty: DatabaseSync | undefined;

  /** `path`: the store file (`Svc.store.path`). */
  constructor(private readonly path: string) {}

  /** Runs a query on the store, or on an empty store while the file or its tables do not exist yet. */
  read<T>(query: (db: DatabaseSync) => T): T {
    return query(this.connection());
  }

  /** Whether the store file is open (false while reads go to the empty store). */
  get open(): boolean {
    return this.file !== undefined;
  }

  private connection(): DatabaseSync {
    if (this.file) return this.file;
    if (existsSync(this.path)) {
      const db = new DatabaseSync(this.path, { readOnly: true });
      // The writer creates the tables in its first transaction: until then, the file is not a store yet.
      const tables = db
        .prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = 'log_events'")
        .get();
      if (Number(tables?.['n']) === 1) {
        db.exec('PRAGMA query_only = ON');
        this.file = db;
        this.empty?.close();
        this.empty = undefined;
        return db;
      }
      db.close();
    }
    if (!this.empty) {
      this.empty = new DatabaseSync(':memory:');
      this.empty.exec(STORE_DDL);
    }
    return this.empty;
  }

  /** Closes the connections (with the web view). */
  close(): void {
    this.file?.close();
    this.empty?.close();
    this.file = undefined;
    this.empty = undefined;
  }
}
