#!/usr/bin/env node
/**
 * The release archives (`npm run release`'s last step; docs/install.md): from the single executables
 * in `release/build/<target>/` (scripts/release/executables.mjs writes them), the shipped config, the
 * service files, LICENSE, INSTALL.md and a third-party notice generated from the production tree, it
 * writes `release/svc-<version>-<target>.tar.gz` (Linux) or `.zip` (Windows), each with one top folder
 * `svc-<version>-<target>/`, and `release/SHA256SUMS` in the `sha256sum -c` format.
 *
 *   node scripts/release/archives.mjs [--build release/build] [--out release]
 *
 * linux-x64 and win-x64 are required; linux-arm64 is added when its executable is there. The tar is
 * written by the `tar` package (portable: no local user names or ids, the executable 0755 whatever
 * the umask was) and the zip by `yazl`; both read one staged folder, so they hold the same files.
 * Times in the archives are the commit's, so the same commit gives the same file list and modes.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';
import yazl from 'yazl';
import { productionPackages } from '../production-tree.mjs';
import { noticeText } from './notices.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the release installs Svc: the paths the service files and docs/install.md name. */
const LINUX_EXECUTABLE = '/opt/svc/svc';
const LINUX_CONFIG = '/etc/svc/svc.yaml';
const WINDOWS_EXECUTABLE = String.raw`%ProgramFiles%\Svc\svc.exe`;
const WINDOWS_CONFIG = String.raw`%ProgramData%\Svc\svc.yaml`;

/** The targets: their executable's name and archive format; `required` ones must have been built. */
export const TARGETS = [
  { name: 'linux-x64', executable: 'svc', format: 'tar.gz', required: true },
  { name: 'linux-arm64', executable: 'svc', format: 'tar.gz', required: false },
  { name: 'win-x64', executable: 'svc.exe', format: 'zip', required: true },
];

/** Replaces the one match of `pattern` in `text`, failing loudly when the source file changed shape. */
function replaceOne(text, pattern, replacement, what) {
  const matches = text.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`)) ?? [];
  if (matches.length !== 1) throw new Error(`${what}: expected one match of ${pattern}, found ${matches.length}`);
  return text.replace(pattern, replacement);
}

/**
 * The release's systemd unit: deploy/systemd/svc.service (one source for the hardening) with the
 * executable in ExecStart and a header saying how the release installs it.
 */
export function releaseUnit(source) {
  const what = 'deploy/systemd/svc.service';
  const header = [
    "# Svc's edge agent as a systemd service, from a release archive (docs/install.md).",
    '# install.sh puts the executable in /opt/svc, the config in /etc/svc/svc.yaml, this unit in',
    '# /etc/systemd/system/, and creates the svc user; then: systemctl start svc.',
  ].join('\n');
  let unit = replaceOne(source, /^(#.*\n)+(?=\[Unit\])/m, `${header}\n`, what);
  unit = replaceOne(unit, /^Documentation=.*$/m, 'Documentation=file:///opt/svc/INSTALL.md', what);
  unit = replaceOne(unit, /^ExecStart=.*$/m, `ExecStart=${LINUX_EXECUTABLE} edge --config ${LINUX_CONFIG}`, what);
  return unit;
}

/**
 * The release's WinSW definition: deploy/windows/svc.xml with the executable instead of node.exe and
 * a header saying how install.ps1 uses it (WinSW beside it as svc-service.exe).
 */
export function releaseWinSW(source) {
  const what = 'deploy/windows/svc.xml';
  const header = [
    '<!--',
    "  Svc's edge agent as a Windows service, from a release archive (docs/install.md): install.ps1",
    String.raw`  copies this file and WinSW 2.x (as svc-service.exe, beside it) to %ProgramFiles%\Svc,`,
    String.raw`  registers the service and runs it as NT SERVICE\svc. The config is ${WINDOWS_CONFIG}.`,
    '-->',
  ].join('\n');
  let xml = replaceOne(source, /^<!--[\s\S]*?-->/, header, what);
  xml = replaceOne(xml, /<executable>[^<]*<\/executable>/, `<executable>${WINDOWS_EXECUTABLE}</executable>`, what);
  xml = replaceOne(
    xml,
    /<arguments>[^<]*<\/arguments>/,
    `<arguments>edge --config "${WINDOWS_CONFIG}"</arguments>`,
    what,
  );
  return xml;
}

/** The files of one target's archive, in order: name, mode, and the source path or the content. */
export function archiveFiles(target, executable, notice) {
  const text = (path) => readFileSync(join(REPO_ROOT, path), 'utf8');
  const common = [
    { name: 'svc.yaml', mode: 0o644, content: text('deploy/release/svc.yaml') },
    { name: 'INSTALL.md', mode: 0o644, content: text('deploy/release/INSTALL.md') },
    { name: 'LICENSE', mode: 0o644, content: text('LICENSE') },
    { name: 'THIRD-PARTY-NOTICES.txt', mode: 0o644, content: notice },
  ];
  const service =
    target.format === 'zip'
      ? [
          { name: 'svc-service.xml', mode: 0o644, content: releaseWinSW(text('deploy/windows/svc.xml')) },
          { name: 'install.ps1', mode: 0o644, content: text('deploy/release/install.ps1') },
        ]
      : [
          { name: 'svc.service', mode: 0o644, content: releaseUnit(text('deploy/systemd/svc.service')) },
          { name: 'install.sh', mode: 0o755, content: text('deploy/release/install.sh') },
        ];
  return [{ name: target.executable, mode: 0o755, path: executable }, ...service, ...common];
}

/** Writes the files into `folder`, each with its mode whatever the umask. */
function stage(folder, files) {
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  chmodSync(folder, 0o755);
  for (const file of files) {
    const to = join(folder, file.name);
    writeFileSync(to, file.path === undefined ? file.content : readFileSync(file.path));
    chmodSync(to, file.mode);
  }
}

async function writeZip(stageRoot, top, files, out, mtime) {
  const zip = new yazl.ZipFile();
  zip.addEmptyDirectory(`${top}/`, { mtime, mode: 0o40755 });
  for (const file of files)
    zip.addFile(join(stageRoot, top, file.name), `${top}/${file.name}`, { mtime, mode: 0o100000 | file.mode });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(out));
}

/** sha256 of a file, in hex. */
function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * Builds the archives of every target whose executable is in `build` into `out`, and SHA256SUMS.
 * Returns the archive paths. `log` receives a line per step.
 */
export async function buildArchives({ build, out, log = console.log }) {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  const missing = TARGETS.filter((t) => t.required && !existsSync(join(build, t.name, t.executable)));
  if (missing.length > 0)
    throw new Error(
      `no executable for ${missing.map((t) => `${t.name} (${join(build, t.name, t.executable)})`).join(', ')}: build them first (scripts/release/executables.mjs)`,
    );
  const seconds = Number(execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: REPO_ROOT, encoding: 'utf8' }));
  const mtime = new Date(seconds * 1000);
  const packages = productionPackages(undefined, REPO_ROOT);
  const notice = noticeText(packages, REPO_ROOT);
  log(`third-party notice: Node.js and ${notice.count} production packages`);
  for (const name of notice.missing) log(`  ${name} has no license file: its license field is quoted`);

  const stageRoot = join(out, '.stage');
  mkdirSync(out, { recursive: true });
  const archives = [];
  for (const target of TARGETS) {
    const executable = join(build, target.name, target.executable);
    if (!existsSync(executable)) {
      log(`${target.name}: no executable at ${executable}, skipped`);
      continue;
    }
    const top = `svc-${version}-${target.name}`;
    const files = archiveFiles(target, executable, notice.text);
    stage(join(stageRoot, top), files);
    const archive = join(out, `${top}.${target.format}`);
    rmSync(archive, { force: true });
    if (target.format === 'zip') await writeZip(stageRoot, top, files, archive, mtime);
    else await tar.create({ gzip: true, portable: true, mtime, cwd: stageRoot, file: archive }, [top]);
    log(`${target.name}: wrote ${archive} (${files.map((f) => f.name).join(', ')})`);
    archives.push(archive);
  }
  rmSync(stageRoot, { recursive: true, force: true });
  const sums = archives.map((a) => `${sha256(a)}  ${basename(a)}\n`).join('');
  writeFileSync(join(out, 'SHA256SUMS'), sums);
  log(`wrote ${join(out, 'SHA256SUMS')} (${archives.length} archives)`);
  return archives;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const option = (name, fallback) => {
    const at = process.argv.indexOf(name);
    return resolve(at > 0 ? (process.argv[at + 1] ?? fallback) : fallback);
  };
  const out = option('--out', join(REPO_ROOT, 'release'));
  try {
    await buildArchives({ build: option('--build', join(out, 'build')), out });
  } catch (error) {
    console.error(`archives: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
