/**
 * TLS to the tsdb (`Svc.tsdbConfig.tls`): whether the transport speaks https, the CA file trusted
 * besides the system's roots, and whether the server's certificate is verified. The CA file is read
 * and checked once — by `svc validate-config`, before `svc local` / `svc edge` start anything, and
 * when the writer is made (a writer Lambda's cold start) — so that a wrong file is a config error
 * naming the key, the path and the reason, not a TLS failure on every write.
 */
import type { RuleFinding } from '../../config/errors.js';
import type { SvcConfig } from '../../config/schema.js';
import { pemCertificates, readPemFile } from '../../util/pem.js';

type TsdbConfig = SvcConfig['tsdbConfig'];

/** What the https agent trusts and checks; null (in `TsdbTlsLoad`) is plain http. */
export interface TsdbTls {
  /**
   * The trusted roots when a CA file is set: the system's (Node's default list) and the file's
   * certificates. Undefined without a CA file: Node's default list alone.
   */
  ca: string[] | undefined;
  /** `tls.rejectUnauthorized`: false accepts any server certificate. */
  rejectUnauthorized: boolean;
  /** The CA file as resolved (absolute), for the start-up log; null when none is set. */
  caFile: string | null;
}

/** The TLS settings, or why the CA file cannot be used. */
export type TsdbTlsLoad = { ok: true; tls: TsdbTls | null } | { ok: false; problems: RuleFinding[] };

/**
 * Reads and checks `tsdbConfig.tls`: nothing when the tsdb or its TLS is off; else the CA file, when
 * set, must be a readable PEM file of at least one certificate. Relative paths start from `cwd`.
 */
export function loadTsdbTls(config: TsdbConfig, cwd = process.cwd()): TsdbTlsLoad {
  const tls = config.tls;
  if (!config.enable || !tls.enable) return { ok: true, tls: null };
  if (tls.caFile === '')
    return { ok: true, tls: { ca: undefined, rejectUnauthorized: tls.rejectUnauthorized, caFile: null } };
  const problem = (message: string): TsdbTlsLoad => ({
    ok: false,
    problems: [{ severity: 'error', path: ['tsdbConfig', 'tls', 'caFile'], message }],
  });
  const read = readPemFile(tls.caFile, cwd);
  if (!read.ok) return problem(read.problem);
  const parsed = pemCertificates(read.file, read.text);
  if (!parsed.ok) return problem(parsed.problem);
  // node:tls only here: its default list is parsed when first asked for, and only a CA file needs it.
  const defaults = process.getBuiltinModule('node:tls').getCACertificates('default');
  return {
    ok: true,
    tls: { ca: [...defaults, ...parsed.blocks], rejectUnauthorized: tls.rejectUnauthorized, caFile: read.file },
  };
}

/** The TLS settings for the transport; throws the problem (naming the key and the file) when the CA file cannot be used. */
export function tsdbTls(config: TsdbConfig): TsdbTls | null {
  const loaded = loadTsdbTls(config);
  if (loaded.ok) return loaded.tls;
  throw new Error(loaded.problems.map((p) => `Svc.tsdbConfig.tls.caFile: ${p.message}`).join('; '));
}
