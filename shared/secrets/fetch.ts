/**
 * Fetches the secret references of a loaded YAML config (fetch-refs.ts does the fetching) and loads
 * the config again with their values: `svc local` / `svc edge` at start. The Lambda functions read
 * the resolved config document instead (shared/config/resolved-load.ts) and use fetch-refs.ts directly.
 */
import { type LoadedConfig, loadConfigFile } from '../config/load.js';
import type { SecretRefAt } from '../config/secret-refs.js';
import { proxyEnvOf, resolveProxy } from '../runtime/proxy.js';
import { type FetchOptions, fetchSecretRefs } from './fetch-refs.js';

export { type FetchOptions, fetchSecretRefs, type SecretClientConfig } from './fetch-refs.js';

export interface ResolveOptions extends FetchOptions {
  /** Which references to fetch; default all. The others stay as written. */
  wanted?: (ref: SecretRefAt) => boolean;
  /** For `${env:NAME}` when the file is loaded again; default process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The references of `loaded` that `options.wanted` selects, fetched, and the config loaded again with
 * their values. They are fetched through the proxy of `Svc.proxy` and the environment as far as it is
 * known before the fetch (a proxy key that is itself a reference counts as empty: its variable applies).
 */
export async function resolveConfigSecrets(loaded: LoadedConfig, options: ResolveOptions = {}): Promise<LoadedConfig> {
  const refs = loaded.secretRefs.filter(options.wanted ?? (() => true));
  if (refs.length === 0) return loaded;
  const proxyEnv = proxyEnvOf(resolveProxy(loaded.config.proxy, options.env ?? process.env));
  const clientConfig = { ...(proxyEnv ? { proxyEnv } : {}), ...options.clientConfig };
  const secrets = await fetchSecretRefs(loaded.file, refs, { ...options, clientConfig });
  return loadConfigFile(loaded.file, loaded.source, options.env ?? process.env, { secrets });
}
