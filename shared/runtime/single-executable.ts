/**
 * Svc as one file: the release's single executable (Node.js's single-executable applications,
 * scripts/release/executables.mjs) carries the bundled CLI and the files Svc reads at run time
 * (the web view's pages and the chart library, `config/demo.yaml`, the generated config validator)
 * as assets of its blob, and no folder beside it. This module is where code asks which way it runs
 * and reads such a file from the blob; elsewhere (a checkout, the container image) the same files
 * are read from the install directory.
 */
import { dirname } from 'node:path';
import { getAsset, isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';

/** Whether this process is Svc's single executable (crash dumps say `SEA (packaged)` then). */
export function isSingleExecutable(): boolean {
  return isSea();
}

/**
 * Svc's install directory: the executable's folder for the single executable, else the package
 * root (this module is `dist/shared/runtime/…` there). Crash dumps show paths relative to it.
 */
export const INSTALL_DIR = isSingleExecutable()
  ? dirname(process.execPath)
  : fileURLToPath(new URL('../../../', import.meta.url));

/**
 * A file shipped inside the single executable, by its asset key (scripts/release/executables.mjs
 * names them: the file's path below the package root, `/`-separated). Only for the executable;
 * throws an Error naming the key when the executable holds no such asset.
 */
export function readAsset(key: string): Buffer {
  try {
    return Buffer.from(getAsset(key));
  } catch (err) {
    throw new Error(
      `the executable holds no file ${key} (build it again with npm run release): ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}
