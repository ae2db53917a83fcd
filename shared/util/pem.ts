/**
 * Reading the PEM files an operator names (the platform's client certificate, the MQTT broker's CA
 * and Svc's client certificate, the tsdb's CA): the file read with a bound, the certificates of a
 * file, the private key block of a file, and an OpenSSL error in a few words, so that every file
 * check says the same things the same way.
 */
import { X509Certificate } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { readRegularFile } from './files.js';
import { groupDigits } from './numbers.js';

/** Most bytes read of a PEM file: a certificate chain or a key is a few KiB, a CA bundle a few hundred. */
export const MAX_PEM_FILE_BYTES = 1_048_576;

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const PRIVATE_KEY_BLOCK = /-----BEGIN ((?:RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY)-----[\s\S]*?-----END \1-----/;

/**
 * The text of the PEM file a key names (`given`; relative to `cwd`), read with a bound, or why it
 * cannot be read: the problem names the file (quoted) and reads as a sentence.
 */
export function readPemFile(
  given: string,
  cwd: string,
): { ok: true; file: string; text: string } | { ok: false; file: string; problem: string } {
  const file = isAbsolute(given) ? given : resolve(cwd, given);
  const read = readRegularFile(file, MAX_PEM_FILE_BYTES);
  if (read.ok) return { ok: true, file, text: read.bytes.toString('latin1') };
  const problem =
    read.tooLarge !== undefined
      ? `${JSON.stringify(file)} is ${groupDigits(read.tooLarge)} bytes; a PEM file of a certificate or key is far smaller (at most ${groupDigits(MAX_PEM_FILE_BYTES)} bytes are read)`
      : `cannot read ${JSON.stringify(file)}: ${read.reason}`;
  return { ok: false, file, problem };
}

/** An OpenSSL error as a short reason: its text after the last `:` (`error:1E08010C:DECODER routines::unsupported` → `unsupported`). */
export function opensslReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const parts = message
    .split(':')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  return parts.length > 1 ? (parts[parts.length - 1] ?? message) : message;
}

/**
 * Every certificate of the PEM text of `file` (a chain or a CA bundle), parsed and as its PEM block
 * (as the file has it, for a TLS option), or why there is none: the
 * problem names the file (quoted) and reads as a sentence.
 */
export function pemCertificates(
  file: string,
  text: string,
): { ok: true; certificates: X509Certificate[]; blocks: string[] } | { ok: false; problem: string } {
  const blocks = text.match(CERTIFICATE_BLOCK) ?? [];
  if (blocks.length === 0)
    return {
      ok: false,
      problem: `${JSON.stringify(file)} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block)`,
    };
  const certificates: X509Certificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      certificates.push(new X509Certificate(block));
    } catch (err) {
      return {
        ok: false,
        problem: `${JSON.stringify(file)}: certificate ${index + 1} of ${blocks.length} cannot be parsed (${opensslReason(err)})`,
      };
    }
  }
  return { ok: true, certificates, blocks };
}

/** The first private key block of a PEM text, and whether it is encrypted; undefined when there is none. */
export function pemPrivateKey(text: string): { pem: string; encrypted: boolean } | undefined {
  const block = PRIVATE_KEY_BLOCK.exec(text);
  if (block === null) return undefined;
  return {
    pem: block[0],
    encrypted: block[1] === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,ENCRYPTED/.test(block[0]),
  };
}
