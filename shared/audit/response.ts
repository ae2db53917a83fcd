/**
 * The answers of the audit API (audit-event-api.md, "Ingestion response"), built in one place for
 * both makers of answers: the audit handler (AWS and local mode) and local mode's gateway, which
 * answers some requests itself before they reach the handler (too slow, not HTTP).
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { EnvelopeError } from './envelope.js';

export type AuditResponse = APIGatewayProxyStructuredResultV2;

export type Outcome = 'processed' | 'dropped' | 'error';

export interface IngestionBody {
  status: 'accepted' | 'error';
  receivedAt: string;
  outcome: Outcome;
  reason?: string;
  details?: { errors?: EnvelopeError[] | { message: string }[]; errorId?: string; retryAfterSeconds?: number };
}

/** A JSON answer that no cache keeps. */
export function respond(statusCode: number, body: object, headers: Record<string, string> = {}): AuditResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

/** An error answer in the ingestion response shape: `{status: "error", receivedAt, outcome, reason, details?}`. */
export function ingestionError(
  receivedAt: string,
  status: number,
  outcome: Outcome,
  reason: string,
  details?: IngestionBody['details'],
  headers?: Record<string, string>,
): AuditResponse {
  return respond(
    status,
    { status: 'error', receivedAt, outcome, reason, ...(details ? { details } : {}) } satisfies IngestionBody,
    headers,
  );
}

/** 500: only an id, which the log line with the details carries (spec: no implementation details in answers). */
export function internalError(receivedAt: string, errorId: string): AuditResponse {
  return ingestionError(receivedAt, 500, 'error', 'Internal server error; retry in 30 to 60 seconds', { errorId });
}
