/**
 * What an endpoint of the read API is: its path below `/api/v1/`, its parameters (params.ts: the
 * parsing and the OpenAPI document both read them) and the query it runs on the store. Its answer's
 * schema is api-types.ts ANSWERS[path].
 */
import type { DatabaseSync } from 'node:sqlite';
import type { Range } from '../../../../shared/store/queries/common.js';
import type { ObservedAlerts } from '../../observed.js';
import type { Parameter, QueryParameters } from './params.js';

/** What an endpoint's query gets. */
export interface EndpointContext {
  db: DatabaseSync;
  query: QueryParameters;
  range: Range;
  /** The path's `{name}` parts, decoded. */
  path: Readonly<Record<string, string>>;
  /** The alert engine (null while alerts are off), and the evaluation interval of the config. */
  alerts: { observed: ObservedAlerts | null; evaluationIntervalMs: number };
  /** The request's now, ms. */
  now: number;
}

/** An endpoint of the read API. */
export interface Endpoint {
  /** Below `/api/v1/`, with `{name}` for a path parameter (a key of api-types.ts ANSWERS). */
  path: string;
  summary: string;
  description: string;
  /** The path parameters, described. */
  pathParameters?: Readonly<Record<string, string>>;
  parameters: readonly Parameter[];
  /**
   * The answer; a string instead means "not found" and says what (a server the store does not know).
   * Throws BadParameterError or BadCursorError for a 400.
   */
  run(context: EndpointContext): object | string;
}
