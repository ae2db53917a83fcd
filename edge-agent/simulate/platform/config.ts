/**
 * The Svc config that polls a running platform simulator: the certificate files, one
 * `serversToMonitor.servers[]` item per simulated server (health on its engine port, sessions on
 * its proxy port with every virtual proxy), session extraction and app-name extraction. As an
 * object (for programs) and as YAML ready to paste under a config file's root.
 */
import { Document } from 'yaml';
import type { CertificateFiles } from './certs.js';

/** The port Svc calls the app-list API on when `appNames.hostIP` names none (§5.2: `https://<hostIP>:4242/qrs/app`). */
export const APP_LIST_DEFAULT_PORT = 4242;

/** One `serversToMonitor.servers[]` item. */
export interface SimulatorServerConfig {
  host: string;
  serverName: string;
  serverDescription: string;
  userSessions: { enable: true; host: string; virtualProxies: { virtualProxy: string }[] };
  serverTags: { site: string; role: string };
}

/** The config sections the simulator fills, under the root key `Svc`. */
export interface SimulatorConfig {
  Svc: {
    cert: { clientCert: string; clientCertKey: string; clientCertCA: string; clientCertPassphrase?: string };
    serversToMonitor: {
      rejectUnauthorized: true;
      serverTagsDefinition: ['site', 'role'];
      servers: SimulatorServerConfig[];
    };
    userSessions: { enableSessionExtract: true };
    appNames: { enableAppNameExtract: true; hostIP: string };
  };
}

export interface ConfigInput {
  /** The address the listeners are bound to. */
  host: string;
  servers: readonly { name: string; description: string; healthPort: number; proxyPort: number }[];
  virtualProxies: readonly string[];
  appPort: number;
  certs: CertificateFiles;
}

/**
 * `appNames.hostIP` for an app-list API on `port`: the host alone on the platform's port 4242,
 * else `host:port` (Svc's app-name poller reads an optional `:port` there, default 4242, so a test
 * or a second simulator can use any free port).
 */
export function appNamesHostIp(host: string, port: number): string {
  return port === APP_LIST_DEFAULT_PORT ? host : `${host}:${port}`;
}

/** The config object for a simulator's listeners and certificate files. */
export function simulatorConfig(input: ConfigInput): SimulatorConfig {
  const { host, certs } = input;
  return {
    Svc: {
      cert: {
        clientCert: certs.clientCert,
        clientCertKey: certs.clientCertKey,
        clientCertCA: certs.clientCertCA,
        ...(certs.passphrase === '' ? {} : { clientCertPassphrase: certs.passphrase }),
      },
      serversToMonitor: {
        rejectUnauthorized: true,
        serverTagsDefinition: ['site', 'role'],
        servers: input.servers.map((s, i) => ({
          host: `${host}:${s.healthPort}`,
          serverName: s.name,
          serverDescription: s.description,
          userSessions: {
            enable: true,
            host: `${host}:${s.proxyPort}`,
            virtualProxies: input.virtualProxies.map((virtualProxy) => ({ virtualProxy })),
          },
          serverTags: { site: 'simulator', role: i === 0 ? 'central' : 'rim' },
        })),
      },
      userSessions: { enableSessionExtract: true },
      appNames: { enableAppNameExtract: true, hostIP: appNamesHostIp(host, input.appPort) },
    },
  };
}

/** The config as YAML, with a comment saying where it comes from. */
export function configYaml(config: SimulatorConfig, seed: number): string {
  const doc = new Document(config);
  doc.commentBefore =
    ` Svc config for \`svc simulate platform\` (seed ${seed}): paste these sections into your config file\n` +
    ' (or run Svc with this file); the certificate paths are absolute.';
  return doc.toString({ lineWidth: 0 });
}
