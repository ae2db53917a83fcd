/** Types of influxd-config.mjs for the TypeScript tests (test/support/influxd.ts). */
export interface InfluxdConfigOptions {
  /** Root of influxd's `meta/`, `data/` and `wal/` directories. */
  dir: string;
  /** The address every listener binds to. */
  host: string;
  /** HTTP API port. */
  httpPort: number;
  /** RPC / backup-restore port (the top-level `bind-address`). */
  rpcPort: number;
}

/** The text of `influxdb.conf`. */
export function influxdConfig(options: InfluxdConfigOptions): string;
