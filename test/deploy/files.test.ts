/**
 * The files operators install Svc with (deploy/) agree with each other and with the code. No Docker
 * engine runs here, so nothing is built or started: the test reads the Dockerfile, the compose file,
 * the container config (through the real config loader and `svc validate-config`), the Grafana
 * provisioning, the systemd unit (and `systemd-analyze verify` where it exists) and the Windows
 * service definition, and checks ports, paths, the health URL and the files they name.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { HEALTH_PATH } from '../../edge-agent/endpoints/health/endpoint.js';
import { loadConfigFile } from '../../shared/config/load.js';
import { logListenerEnabled } from '../../shared/config/outputs.js';
import { isRecord } from '../../shared/util/records.js';
import { REPO_ROOT } from '../support/build.js';
import { SVC_BIN } from '../support/svc-process.js';

const repo = (path: string): string => join(REPO_ROOT, path);
const text = (path: string): string => readFileSync(repo(path), 'utf8');
/** The node flags of the `svc` bin's shebang (`#!/usr/bin/env -S node <flags>`): every launcher passes the same. */
const NODE_FLAGS = (/^#!\/usr\/bin\/env -S node((?: --[\w-]+=\S+)*)$/m.exec(text('edge-agent/bin/svc.js'))?.[1] ?? '')
  .trim()
  .split(' ')
  .filter((flag) => flag !== '');

// ---- readers of the file formats (small on purpose: only what these files use) ----

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions, continuation lines joined, comments dropped; `stage` counts FROMs. */
function dockerfile(path: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  let pending = '';
  for (const raw of readFileSync(repo(path), 'utf8').split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    const [op = '', ...rest] = whole.split(/\s+/);
    if (op.toUpperCase() === 'FROM') stage += 1;
    out.push({ op: op.toUpperCase(), args: rest.join(' '), stage });
  }
  return out;
}

/** A JSON-array (exec form) argument list. */
function execForm(args: string): string[] {
  const value: unknown = JSON.parse(args);
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string'))
    throw new Error(`not an exec-form list: ${args}`);
  return value;
}

/** `[section]` → key → values (a key may repeat), comments dropped. */
function unitFile(path: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current = new Map<string, string[]>();
  for (const raw of readFileSync(repo(path), 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line)?.[1];
    if (section) {
      current = new Map();
      sections.set(section, current);
      continue;
    }
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)]);
  }
  return sections;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (!isRecord(value)) throw new Error(`${what} is not a mapping`);
  return value;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`);
  return value;
}

function strings(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string'))
    throw new Error(`${what} is not a list of strings`);
  return value;
}

function str(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new Error(`${what} is not a string`);
  return value;
}

/** Whether `.dockerignore` (its simple patterns: a path, or `**\/name`) leaves `path` out of the build context. */
function ignored(path: string, patterns: readonly string[]): boolean {
  const segments = path.split('/');
  return patterns.some((p) => {
    if (p.startsWith('**/')) {
      const name = p.slice(3);
      return name.startsWith('*.') ? segments.some((s) => s.endsWith(name.slice(1))) : segments.includes(name);
    }
    return path === p || path.startsWith(`${p}/`);
  });
}

// ---- the files ----

const CONTAINER_CONFIG = 'deploy/docker/svc.yaml';
const steps = dockerfile('deploy/Dockerfile');
const stages = Math.max(...steps.map((s) => s.stage)) + 1;
const final = steps.filter((s) => s.stage === stages - 1);
const compose = record(parse(text('deploy/docker-compose.yml')), 'the compose file');
const services = record(compose['services'], 'services');
const svcService = record(services['svc'], 'services.svc');
const grafana = record(services['grafana'], 'services.grafana');
const loaded = loadConfigFile(repo(CONTAINER_CONFIG));
const config = loaded.config;

/** `port/proto` of every listener the container config turns on in `svc edge`. */
function configPorts(): Set<string> {
  const ports = new Set<string>();
  if (config.userEvents.enable) ports.add(`${config.userEvents.udpServerConfig.portUserActivityEvents}/udp`);
  if (logListenerEnabled(config)) ports.add(`${config.logEvents.udpServerConfig.portLogEvents}/udp`);
  if (config.metricsEndpoint.enable) ports.add(`${config.metricsEndpoint.port}/tcp`);
  if (config.containerHealthCheck.enable) ports.add(`${config.containerHealthCheck.port}/tcp`);
  if (config.configVisualisation.enable) ports.add(`${config.configVisualisation.port}/tcp`);
  return ports;
}

const envOf = (instructions: Instruction[]): Map<string, string> =>
  new Map(
    instructions
      .filter((s) => s.op === 'ENV')
      .flatMap((s) => [...s.args.matchAll(/(\w+)=(\S+)/g)].map((m): [string, string] => [m[1] ?? '', m[2] ?? ''])),
  );
const only = (op: string): Instruction => {
  const [found, ...more] = final.filter((s) => s.op === op);
  if (!found || more.length > 0)
    throw new Error(`the runtime stage has ${more.length + (found ? 1 : 0)} ${op} instructions, not 1`);
  return found;
};

describe('deploy/docker/svc.yaml, the container config', () => {
  it('passes the real loader: listeners and endpoints on every interface, the queue and crash dumps in the data volume, the tsdb of the compose file', () => {
    expect(config.containerHealthCheck.enable).toBe(true);
    expect(config.userEvents.udpServerConfig.serverHost).toBe('0.0.0.0');
    expect(config.logEvents.udpServerConfig.serverHost).toBe('0.0.0.0');
    expect(config.metricsEndpoint).toMatchObject({ enable: true, host: '0.0.0.0' });
    expect(config.tsdbConfig).toMatchObject({ enable: true, version: 1 });
    expect(loaded.warnings).toEqual([]);
    const volume = only('VOLUME').args;
    for (const dir of [config.localQueue.directory, config.crashFile.crashFileDirectory])
      expect(dir.startsWith(`${volume}/`), dir).toBe(true);
  });

  it('passes `svc validate-config`, warning at most about features not built yet', () => {
    const run = spawnSync(SVC_BIN, ['validate-config', '--config', CONTAINER_CONFIG], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, SVC_CONFIG: '' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${CONTAINER_CONFIG}: configuration is valid\n`);
    for (const line of run.stderr.split('\n').filter((l) => l !== ''))
      expect(line).toMatch(/^warning: Svc\.[\w.]+: .* is not built yet: this setting has no effect$/);
  });
});

describe('deploy/Dockerfile', () => {
  it('builds in a stage of its own and runs on Node 24 slim as a user created for it, not root', () => {
    expect(stages).toBe(2);
    expect(steps.filter((s) => s.op === 'FROM').map((s) => s.args)).toEqual(['node:24-slim AS build', 'node:24-slim']);
    const user = only('USER').args;
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(
      final.some((s) => s.op === 'RUN' && s.args.includes(`useradd --system`) && s.args.includes(` ${user}`)),
    ).toBe(true);
    // Production dependencies only in the image that runs.
    expect(final.some((s) => s.op === 'RUN' && /npm ci --omit=dev\b/.test(s.args))).toBe(true);
  });

  it('EXPOSEs exactly the ports the container config listens on', () => {
    const exposed = new Set(
      only('EXPOSE')
        .args.split(/\s+/)
        .map((p) => (p.includes('/') ? p : `${p}/tcp`)),
    );
    expect(exposed).toEqual(configPorts());
  });

  it('checks health with GET /health on Svc.containerHealthCheck.port, without curl', () => {
    const { args } = only('HEALTHCHECK');
    const command = execForm(args.slice(args.indexOf('CMD ') + 4));
    expect(command[0]).toBe('node');
    expect(command.join(' ')).toContain(`fetch('http://127.0.0.1:${config.containerHealthCheck.port}${HEALTH_PATH}'`);
    expect(command.join(' ')).toContain('r.status === 200 ? 0 : 1');
  });

  it('names the config with SVC_CONFIG, documents the same path for the mount, and works in the data volume', () => {
    const env = envOf(final);
    const configPath = env.get('SVC_CONFIG');
    expect(configPath).toBe('/etc/svc/svc.yaml');
    expect(text('deploy/Dockerfile')).toContain(`:${configPath}:ro`);
    // The last WORKDIR is where Svc runs: relative directories of a config land in the volume.
    expect(final.filter((s) => s.op === 'WORKDIR').at(-1)?.args).toBe(only('VOLUME').args);
  });

  it('copies only files that exist and the build context keeps, and the runtime stage has what the entry point runs', () => {
    const patterns = text('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const builtByStage = new Set(['dist']);
    const made = steps
      .filter((s) => s.stage === 0 && s.op === 'RUN')
      .flatMap((s) => [...s.args.matchAll(/mkdir -p (\S+)/g)].map((m) => m[1] ?? ''));
    for (const copy of steps.filter((s) => s.op === 'COPY')) {
      const parts = copy.args.split(/\s+/);
      const fromBuild = parts[0] === '--from=build';
      const sources = parts.slice(fromBuild ? 1 : 0, -1);
      for (const source of sources) {
        if (fromBuild) {
          const inBuild = posix.relative('/src', source);
          expect(builtByStage.has(inBuild) || made.includes(inBuild), source).toBe(true);
          continue;
        }
        expect(existsSync(repo(source)), source).toBe(true);
        expect(ignored(source, patterns), `${source} is left out by .dockerignore`).toBe(false);
      }
    }
    const entry = execForm(only('ENTRYPOINT').args);
    expect(entry[0]).toBe('node');
    expect(entry.slice(1, 1 + NODE_FLAGS.length)).toEqual(NODE_FLAGS);
    const script = entry[1 + NODE_FLAGS.length] ?? '';
    expect(script.startsWith('/app/')).toBe(true);
    const inApp = script.slice('/app/'.length);
    expect(existsSync(repo(inApp)), inApp).toBe(true);
    expect(final.some((s) => s.op === 'COPY' && s.args === `${posix.dirname(inApp)} ${posix.dirname(inApp)}`)).toBe(
      true,
    );
    // The script runs the build output the image copies.
    expect(text(inApp)).toContain('../../dist/edge-agent/cli/main.js');
    expect(execForm(only('CMD').args)).toEqual(['edge']);
  });

  it('gives the build stage every script `npm run build` runs', () => {
    const build = str(
      record(record(JSON.parse(text('package.json')), 'package.json')['scripts'], 'scripts')['build'],
      'the build script',
    );
    const scripts = [...build.matchAll(/\bnode (\S+)/g)].map((m) => m[1] ?? '');
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      const top = script.split('/')[0] ?? '';
      expect(
        steps.some((s) => s.stage === 0 && s.op === 'COPY' && s.args === `${top} ${top}`),
        script,
      ).toBe(true);
    }
  });
});

describe('deploy/docker-compose.yml', () => {
  it('builds the Dockerfile from the repository root', () => {
    const build = record(svcService['build'], 'services.svc.build');
    expect(posix.join('deploy', str(build['context'], 'context'), str(build['dockerfile'], 'dockerfile'))).toBe(
      'deploy/Dockerfile',
    );
  });

  it('publishes exactly the ports the Dockerfile EXPOSEs, on the same host ports; no other service takes one', () => {
    const published = strings(svcService['ports'], 'services.svc.ports').map((p) => {
      const [mapping = '', proto = 'tcp'] = p.split('/');
      const [host, container] = mapping.split(':');
      expect(host, p).toBe(container);
      return `${container}/${proto}`;
    });
    expect(new Set(published)).toEqual(configPorts());
    expect(published).toHaveLength(configPorts().size);
    const others = Object.entries(services)
      .filter(([name]) => name !== 'svc')
      .flatMap(([, s]) => strings(record(s, 'service')['ports'] ?? [], 'ports'));
    for (const port of others) expect(published.map((p) => p.split('/')[0])).not.toContain(port.split(':')[0]);
  });

  it('mounts the container config at the path SVC_CONFIG names, read-only, and the data volume where the Dockerfile declares it', () => {
    const configPath = envOf(final).get('SVC_CONFIG');
    expect(record(svcService['environment'], 'environment')['SVC_CONFIG']).toBe(configPath);
    const volumes = strings(svcService['volumes'], 'services.svc.volumes');
    expect(volumes).toContain(`./docker/svc.yaml:${configPath}:ro`);
    expect(posix.join('deploy', './docker/svc.yaml')).toBe(CONTAINER_CONFIG);
    expect(volumes.some((v) => v.endsWith(`:${only('VOLUME').args}`))).toBe(true);
  });

  it('stops Svc with as much time as the systemd unit and the Windows service give it', () => {
    const unit = unitFile('deploy/systemd/svc.service').get('Service');
    expect(svcService['stop_grace_period']).toBe(`${unit?.get('TimeoutStopSec')?.[0] ?? ''}s`);
    expect(text('deploy/windows/svc.xml')).toContain(
      `<stoptimeout>${unit?.get('TimeoutStopSec')?.[0] ?? ''} sec</stoptimeout>`,
    );
  });

  it('runs the InfluxDB the container config writes to, as a service of that name', () => {
    expect(Object.keys(services)).toContain(config.tsdbConfig.host);
    expect(str(record(services[config.tsdbConfig.host], 'influxdb')['image'], 'image')).toMatch(/^influxdb:1\.\d+$/);
  });
});

describe('Grafana provisioning (deploy/docker/grafana/)', () => {
  const volumes = strings(grafana['volumes'], 'services.grafana.volumes').map((v) => v.split(':'));
  const mountOf = (target: string): string | undefined => volumes.find(([, t]) => t === target)?.[0];
  const provisioning = mountOf('/etc/grafana/provisioning') ?? '';
  const datasources = record(
    parse(text(posix.join('deploy', provisioning, 'datasources/influxdb.yaml'))),
    'datasources file',
  );
  const [source] = list(datasources['datasources'], 'datasources').map((d) => record(d, 'datasource'));
  const providers = record(parse(text(posix.join('deploy', provisioning, 'dashboards/svc.yaml'))), 'dashboards file');
  const [provider] = list(providers['providers'], 'providers').map((p) => record(p, 'provider'));

  it('mounts a provisioning folder that exists', () => {
    expect(statSync(repo(posix.join('deploy', provisioning))).isDirectory()).toBe(true);
  });

  it('the data source is the InfluxDB of the compose file and the database of the container config, with InfluxQL', () => {
    expect(source).toMatchObject({
      type: 'influxdb',
      url: `http://${config.tsdbConfig.host}:${config.tsdbConfig.port}`,
      isDefault: true,
    });
    expect(record(source?.['jsonData'], 'jsonData')['dbName']).toBe(config.tsdbConfig.v1Config.dbName);
  });

  it("provisions docs/grafana/svc-influxdb.json itself (mounted, not copied) from the provider's folder", () => {
    const path = str(record(provider?.['options'], 'options')['path'], 'path');
    const dashboards = volumes.filter(([, target]) => target?.startsWith(`${path}/`));
    expect(dashboards.map(([from]) => posix.join('deploy', from ?? ''))).toEqual(['docs/grafana/svc-influxdb.json']);
    expect(record(grafana['environment'], 'environment')['GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH']).toBe(
      dashboards[0]?.[1],
    );
  });

  it('every data source the dashboard names is its DS_INFLUXDB variable, which picks a data source of the provisioned type', () => {
    const dashboard = record(JSON.parse(text('docs/grafana/svc-influxdb.json')), 'dashboard');
    const inputs = list(dashboard['__inputs'], '__inputs').map((i) => record(i, 'input'));
    expect(inputs.map((i) => [i['name'], i['pluginId']])).toEqual([['DS_INFLUXDB', source?.['type']]]);
    const uids = new Set(
      [...text('docs/grafana/svc-influxdb.json').matchAll(/"uid": "(\$\{[^}]+\})"/g)].map((m) => m[1]),
    );
    expect(uids).toEqual(new Set(['${DS_INFLUXDB}']));
    // File provisioning does not fill in __inputs (only the import dialog does): the variable does.
    const variables = list(record(dashboard['templating'], 'templating')['list'], 'templating.list').map((v) =>
      record(v, 'variable'),
    );
    expect(variables.find((v) => v['name'] === 'DS_INFLUXDB')).toMatchObject({
      type: 'datasource',
      query: source?.['type'],
    });
  });
});

describe('deploy/systemd/svc.service', () => {
  const unit = unitFile('deploy/systemd/svc.service');
  const service = unit.get('Service') ?? new Map<string, string[]>();
  const one = (key: string): string => service.get(key)?.[0] ?? '';

  it('runs `svc edge --config /etc/svc/svc.yaml` from the package, as its own user, restarting on failure', () => {
    const [node, ...rest] = one('ExecStart').split(' ');
    expect(node).toBe('/usr/bin/node');
    expect(rest.slice(0, NODE_FLAGS.length)).toEqual(NODE_FLAGS);
    const [script = '', ...args] = rest.slice(NODE_FLAGS.length);
    expect(script.startsWith('/opt/svc/')).toBe(true);
    expect(existsSync(repo(script.slice('/opt/svc/'.length))), script).toBe(true);
    expect(args).toEqual(['edge', '--config', envOf(final).get('SVC_CONFIG')]);
    const help = spawnSync(SVC_BIN, ['edge', '--help'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--config');
    expect(one('User')).toBe('svc');
    expect(one('Restart')).toBe('on-failure');
  });

  it('can write its data directory (the working directory) under ProtectSystem=strict', () => {
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('WorkingDirectory')).toBe(`/var/lib/${one('StateDirectory')}`);
    // The queue's lock is an abstract Unix socket; V8 needs writable executable memory.
    expect(one('RestrictAddressFamilies').split(' ')).toContain('AF_UNIX');
    expect(service.has('MemoryDenyWriteExecute')).toBe(false);
  });

  it("reads the edge identity's key from the optional file that docs/deployment.md tells operators to write", () => {
    const file = one('EnvironmentFile');
    expect(file.startsWith('-'), 'optional: the unit also runs without forwarding').toBe(true);
    expect(text('docs/deployment.md')).toContain(`\`${file.slice(1)}\``);
  });

  it('passes `systemd-analyze verify` where systemd is installed', ({ skip }) => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (probe.status !== 0) skip('systemd-analyze is not installed here');
    const run = spawnSync('systemd-analyze', ['verify', repo('deploy/systemd/svc.service')], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});

describe('deploy/windows/svc.xml', () => {
  const xml = text('deploy/windows/svc.xml');
  const element = (name: string): string => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? '';

  it('runs `svc edge --config` with the script of the package, and restarts on failure', () => {
    expect(element('id')).toBe('svc');
    const flags = NODE_FLAGS.map((flag) => `${flag} `).join('');
    expect(element('arguments').startsWith(`${flags}"`)).toBe(true);
    const args = /^"%ProgramFiles%\\Svc\\([^"]+)" edge --config "([^"]+)"$/.exec(
      element('arguments').slice(flags.length),
    );
    expect(args, element('arguments')).not.toBeNull();
    const script = (args?.[1] ?? '').replaceAll('\\', '/');
    expect(existsSync(repo(script)), script).toBe(true);
    expect(args?.[2]).toBe('%ProgramData%\\Svc\\svc.yaml');
    expect(element('workingdirectory')).toBe('%ProgramData%\\Svc');
    expect(xml).toContain('<onfailure action="restart"');
  });

  it('shows the credentials-file line docs/deployment.md tells operators to uncomment', () => {
    const line = /<env name="AWS_SHARED_CREDENTIALS_FILE" value="([^"]+)"\/>/.exec(xml);
    expect(line, 'the commented AWS_SHARED_CREDENTIALS_FILE line').not.toBeNull();
    expect(text('docs/deployment.md')).toContain(line?.[1] ?? 'missing');
  });
});
