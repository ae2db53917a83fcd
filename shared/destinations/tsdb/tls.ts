/**
 * TLS to the tsdb (`Svc.tsdbConfig.tls`): whether the transport speaks https, the CA file trusted
 * besides the system's roots, and whether the server's certificate is verified. The CA file is read
 * and checked once — by `svc validate-config`, before `svc local` / `svc edge` start anything, and
 * when the writer is made (a writer Lambda's cold start) — so that a wrong file is a config error
 * naming the key, the path and the reason, not a TLS failure on every write.
 */
import { X509Certificate } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import type { RuleFinding } from '../../config/errors.js';
import type { SvcConfig } from '../../config/schema.js';
import { readRegularFile } from '../../util/files.js';

type TsdbConfig = SvcConfig['tsdbConfig'];

/** Largest CA file read: a CA bundle is a few hundred KB at most. */
const MAX_CA_FILE_BYTES = 1_048_576;
const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

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
  const file = isAbsolute(tls.caFile) ? tls.caFile : resolve(cwd, tls.caFile);
  const problem = (message: string): TsdbTlsLoad => ({
    ok: false,
    problems: [{ severity: 'error', path: ['tsdbConfig', 'tls', 'caFile'], message }],
  });
  const read = readRegularFile(file, MAX_CA_FILE_BYTES);
  if (!read.ok)
    return problem(
      read.tooLarge !== undefined
        ? `${JSON.stringify(file)} is ${read.tooLarge} bytes; a PEM file of CA certificates is far smaller (at most ${MAX_CA_FILE_BYTES} bytes are read)`
        : `cannot read ${JSON.stringify(file)}: ${read.reason}`,
    );
  const blocks = read.bytes.toString('latin1').match(CERT_BLOCK) ?? [];
  if (blocks.length === 0)
    return problem(`${JSON.stringify(file)} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block)`);
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (err) {
      return problem(
        `${JSON.stringify(file)}: certificate ${i + 1} of ${blocks.length} cannot be parsed (${err instanceof Error ? err.message : String(err)})`,
      );
    }
  }
  // node:tls only here: its default list is parsed when first asked for, and only a CA file needs it.
  const defaults = process.getBuiltinModule('node:tls').getCACertificates('default');
  return { ok: true, tls: { ca: [...defaults, ...blocks], rejectUnauthorized: tls.rejectUnauthorized, caFile: file } };
}

/** The TLS settings for the transport; throws the problem (naming the key and the file) when the CA file cannot be used. */
export function tsdbTls(config: TsdbConfig): TsdbTls | null {
  const loaded = loadTsdbTls(config);
  if (loaded.ok) return loaded.tls;
  throw new Error(loaded.problems.map((p) => `Svc.tsdbConfig.tls.caFile: ${p.message}`).join('; '));
}
