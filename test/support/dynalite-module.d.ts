/**
 * Minimal types for dynalite 4 (a DynamoDB emulator on LevelDB), which ships none. Only the factory
 * that test/support/dynalite.ts uses is described. Named `dynalite-module.d.ts`, not `dynalite.d.ts`:
 * next to `dynalite.ts` a same-named .d.ts would be dropped from the program by tsc.
 */
declare module 'dynalite' {
  import type { Server } from 'node:http';

  namespace dynalite {
    interface Options {
      /** Milliseconds a table stays CREATING / DELETING / UPDATING (default 500 each). */
      createTableMs?: number;
      deleteTableMs?: number;
      updateTableMs?: number;
      /** Maximum item size in KB (default 400). */
      maxItemSizeKb?: number;
      /** LevelDB directory; in-memory when omitted. */
      path?: string;
      ssl?: boolean;
      /** Note: verbose/debug are module-wide switches in dynalite, not per server. */
      verbose?: boolean;
      debug?: boolean;
    }
  }

  /** Returns an http.Server whose close() also closes the store (and may wait up to 30 s for pending operations). */
  function dynalite(options?: dynalite.Options): Server;

  export = dynalite;
}
