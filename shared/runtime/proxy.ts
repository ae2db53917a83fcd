/**
 * The corporate forward proxy of every outbound HTTP(S) call of `svc local` / `svc edge`
 * (docs/deployment.md "Behind a corporate proxy"): SQS, S3, the secret stores, the monitoring SaaS,
 * heartbeats, telemetry, the platform's APIs. Resolved once at start from `Svc.proxy` and the
 * environment, key by key (a key that is set wins over the variables: it is the service's
 * reviewed setting, while the environment is the host's), then handed to Node's built-in proxy
 * support: `http.setGlobalProxyFromEnv` for global fetch and the global agents, and the `proxyEnv`
 * option of every agent Svc makes itself (proxyAgentOptions). The semantics are Node's
 * (`NODE_USE_ENV_PROXY`, undici's EnvHttpProxyAgent): a plain-HTTP target goes through HTTP_PROXY,
 * an HTTPS one through HTTPS_PROXY with CONNECT (TLS stays end to end, a client certificate too),
 * and only NO_PROXY keeps a host out, loopback addresses included.
 *
 * The Lambda functions never install one: nothing here loads undici or anything else until a proxy
 * is configured, and their agents stay as they were (proxyAgentOptions is empty).
 */
import { type ProxyEnv, setGlobalProxyFromEnv } from 'node:http';
import type { Log } from '../logging/log.js';

/** `Svc.proxy`: empty keys are taken from the environment. */
export interface ProxySection {
  httpProxy: string;
  httpsProxy: string;
  noProxy: string;
}

/** One resolved setting and where it came from: a config key (`Svc.proxy.httpsProxy`) or a variable (`https_proxy`). */
export interface ProxySetting {
  value: string;
  from: string;
}

/** What start-up resolved; a missing member is not set anywhere. */
export interface ResolvedProxy {
  http?: ProxySetting;
  https?: ProxySetting;
  noProxy?: ProxySetting;
}

/** The config key and the variables (lower-case first: Node's and curl's precedence) of each setting. */
const SETTINGS = [
  { member: 'http', key: 'httpProxy', variables: ['http_proxy', 'HTTP_PROXY'] },
  { member: 'https', key: 'httpsProxy', variables: ['https_proxy', 'HTTPS_PROXY'] },
  { member: 'noProxy', key: 'noProxy', variables: ['no_proxy', 'NO_PROXY'] },
] as const;

/** A secret reference not fetched yet (`${aws-secret:…}` before start fetches it): not a value to use. */
const UNRESOLVED_REFERENCE = /^\$\{aws-/;

/** Each setting from its config key when that is set, else from the environment. */
export function resolveProxy(section: ProxySection, env: NodeJS.ProcessEnv): ResolvedProxy {
  const resolved: ResolvedProxy = {};
  for (const { member, key, variables } of SETTINGS) {
    const configured = section[key].trim();
    if (configured !== '' && !UNRESOLVED_REFERENCE.test(configured)) {
      resolved[member] = { value: configured, from: `Svc.proxy.${key}` };
      continue;
    }
    for (const variable of variables) {
      const value = env[variable]?.trim();
      if (value) {
        resolved[member] = { value, from: variable };
        break;
      }
    }
  }
  return resolved;
}

/**
 * What is wrong with the proxy URLs, one line each naming where the URL came from and never its
 * text (it may hold a password). Node's agents ignore a URL they cannot parse and connect
 * directly, which on a network that needs the proxy fails far from the cause: start-up refuses it.
 */
export function proxyProblems(resolved: ResolvedProxy): string[] {
  const problems: string[] = [];
  for (const setting of [resolved.http, resolved.https]) {
    if (setting === undefined) continue;
    const url = URL.parse(setting.value);
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
      problems.push(
        `${setting.from} is not an http:// or https:// proxy URL with a host (e.g. http://proxy.example.com:3128)`,
      );
  }
  return problems;
}

/** The `proxyEnv` of Node's agents for `resolved`; undefined when neither proxy is set (then NO_PROXY has nothing to do). */
export function proxyEnvOf(resolved: ResolvedProxy): ProxyEnv | undefined {
  if (resolved.http === undefined && resolved.https === undefined) return undefined;
  return {
    ...(resolved.http ? { HTTP_PROXY: resolved.http.value } : {}),
    ...(resolved.https ? { HTTPS_PROXY: resolved.https.value } : {}),
    ...(resolved.noProxy ? { NO_PROXY: resolved.noProxy.value } : {}),
  };
}

/**
 * A proxy as a log line may show it: its host and port, its scheme, whether it carries credentials
 * (never them), and where it was set. Not the URL: the logger scrubs a configured secret's whole
 * text, and a proxy key is one.
 */
function describe(setting: ProxySetting): string {
  const url = URL.parse(setting.value);
  if (url === null) return `an unparsable URL (${setting.from})`;
  const credentials = url.username !== '' || url.password !== '' ? ', with credentials' : '';
  return `${url.host} (${url.protocol.slice(0, -1)} proxy${credentials}, from ${setting.from})`;
}

/** The start-up line: which proxy each scheme uses and what NO_PROXY keeps out, or that none is used. */
export function proxySummary(resolved: ResolvedProxy): { fields: Record<string, string | null>; message: string } {
  const fields = {
    httpProxy: resolved.http ? describe(resolved.http) : null,
    httpsProxy: resolved.https ? describe(resolved.https) : null,
    noProxy: resolved.noProxy?.value ?? null,
  };
  if (proxyEnvOf(resolved) === undefined)
    return {
      fields,
      message:
        'outbound HTTP(S) calls connect directly: no proxy is set (Svc.proxy.httpProxy / httpsProxy, HTTP_PROXY / HTTPS_PROXY)',
    };
  const noProxy = resolved.noProxy
    ? `; NO_PROXY (from ${resolved.noProxy.from}): ${resolved.noProxy.value}`
    : '; NO_PROXY is empty: every host goes through the proxy, loopback included';
  return {
    fields,
    message: `outbound proxy: http:// targets through ${fields.httpProxy ?? 'none (direct)'}, https:// targets through ${fields.httpsProxy ?? 'none (direct)'}${noProxy}`,
  };
}

let installed: ProxyEnv | undefined;

/**
 * Makes `resolved` the process's proxy, before any outbound call: global fetch and the global
 * agents through Node's own support, every agent Svc builds through proxyAgentOptions. Logs the
 * start-up line. Throws naming the setting when a proxy URL cannot be used (proxyProblems).
 * Returns what puts the previous state back (a test that installs one in its own process).
 */
export function installProxy(resolved: ResolvedProxy, log: Pick<Log, 'info'>): () => void {
  const problems = proxyProblems(resolved);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const previous = installed;
  installed = proxyEnvOf(resolved);
  // Only with a proxy: setting the global dispatcher loads undici, which a direct process never needs.
  const restoreGlobals = installed === undefined ? undefined : setGlobalProxyFromEnv(installed);
  const { fields, message } = proxySummary(resolved);
  log.info({ proxy: fields }, message);
  return () => {
    restoreGlobals?.();
    installed = previous;
  };
}

/**
 * The options every agent Svc makes spreads in (`new https.Agent({ ...proxyAgentOptions(), … })`):
 * the installed proxy, or `override` (the secret fetch at start, before installProxy); empty when
 * there is none, so the agent is what it was without a proxy.
 */
export function proxyAgentOptions(override?: ProxyEnv): { proxyEnv?: ProxyEnv } {
  const proxyEnv = override ?? installed;
  return proxyEnv === undefined ? {} : { proxyEnv };
}

/**
 * The AWS SDK's clients (S3) make their agents from these options (NodeHttpHandler's `httpAgent`,
 * `httpsAgent`): spread into `requestHandler`. Empty without a proxy.
 */
export function sdkProxyAgents(): { httpAgent?: { proxyEnv: ProxyEnv }; httpsAgent?: { proxyEnv: ProxyEnv } } {
  return installed === undefined ? {} : { httpAgent: { proxyEnv: installed }, httpsAgent: { proxyEnv: installed } };
}

/** An AWS SDK client's options with those agents (`requestHandler`), or none at all without a proxy: the client is then what it was. */
export function sdkProxyOptions(): { requestHandler?: ReturnType<typeof sdkProxyAgents> } {
  return installed === undefined ? {} : { requestHandler: sdkProxyAgents() };
}
