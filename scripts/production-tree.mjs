/**
 * The production tree of this checkout, shared by the license check (scripts/licenses.mjs) and the
 * third-party notice (scripts/release/notices.mjs): the packages `npm ci --omit=dev` installs, as
 * `npm query .prod` lists them, without Svc's own packages (the root and its workspaces), which are
 * not dependencies.
 */
import { execFileSync } from 'node:child_process';

/** Svc's own packages by their `location` in `npm query` (the root is ''). */
const WORKSPACES = new Set(['', 'shared', 'functions', 'edge-agent', 'infra']);

/**
 * The production dependencies: `npm query .prod` of `cwd`, or the given list (e.g. a `--packages`
 * file a test writes), each `{name, version, license, location, path}`, workspaces left out.
 */
export function productionPackages(listed, cwd = process.cwd()) {
  const packages =
    listed ??
    JSON.parse(execFileSync('npm', ['query', '.prod'], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
  return packages.filter((entry) => !WORKSPACES.has(entry.location ?? ''));
}

/** The license of a package entry: a string, or the old `{type}` object form. */
export function licenseOf(entry) {
  const { license } = entry;
  if (typeof license === 'string') return license;
  if (license && typeof license === 'object' && typeof license.type === 'string') return license.type;
  return undefined;
}
