/** The audit API's paths (audit-event-api.md, Endpoints); no dependencies, so the CDK stack can take them too. */
export const AUDIT_EVENT_PATH = '/api/v1/audit-event';
export const TEST_CONNECTION_PATH = '/api/v1/test-connection';
