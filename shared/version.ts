/** The service's own name and version; the one source is the root package.json. */
import pkg from '../package.json' with { type: 'json' };

export const SVC_NAME = 'svc';
export const SVC_VERSION: string = pkg.version;
