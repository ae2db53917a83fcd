/**
 * The platform's request checks (§5.1, §5.2) as the simulator applies them: the session and
 * app-list APIs refuse a request without a matching Xrfkey, and the app list one that does not come
 * from a repository service user, so Svc's pollers are tested against the same refusals.
 */
import type { IncomingMessage } from 'node:http';

const XRFKEY = /^[A-Za-z0-9]{16}$/;

/**
 * The platform's cross-site request forgery check: one `xrfkey` query parameter (name in any case:
 * §5.1 writes `Xrfkey`, §5.2 `xrfkey`) of 16 letters and digits, and an `X-Qlik-Xrfkey` header
 * equal to it. Returns what is wrong, or undefined.
 */
export function xrfkeyProblem(url: URL, header: string | undefined): string | undefined {
  const keys = [...url.searchParams].filter(([name]) => name.toLowerCase() === 'xrfkey').map(([, value]) => value);
  const [key] = keys;
  if (key === undefined) return 'the query has no xrfkey parameter';
  if (keys.length > 1) return 'the query has more than one xrfkey parameter';
  if (!XRFKEY.test(key)) return 'the xrfkey must be 16 characters a-z, A-Z, 0-9';
  if (header === undefined) return 'the X-Qlik-Xrfkey header is missing';
  if (header !== key) return "the X-Qlik-Xrfkey header differs from the query's xrfkey";
  return undefined;
}

const QLIK_USER = /^\s*UserDirectory\s*=\s*([^;]*?)\s*;\s*UserId\s*=\s*([^;]*?)\s*;?\s*$/i;
/** The repository's internal service users, which see every app. */
const SERVICE_USERS = new Set(['sa_repository', 'sa_api']);

/** §5.2 `X-Qlik-User: UserDirectory=Internal; UserId=sa_repository`: returns what is wrong, or undefined. */
export function qlikUserProblem(header: string | undefined): string | undefined {
  if (header === undefined) return 'the X-Qlik-User header is missing';
  const match = QLIK_USER.exec(header);
  if (!match) return 'the X-Qlik-User header must read "UserDirectory=<directory>; UserId=<user id>"';
  const [, directory = '', id = ''] = match;
  if (directory.toLowerCase() !== 'internal' || !SERVICE_USERS.has(id.toLowerCase()))
    return `user ${directory}\\${id} may not read the app list (use Internal\\sa_repository)`;
  return undefined;
}

/** A request header as one string: Node gives a repeated header as an array, the checks compare one value. */
export function requestHeader(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
