/**
 * Alarms and a dashboard over the event pipeline and the audit API: what an operator must hear about
 * is an event that cannot be written (a dead letter, a writer error), a writer that cannot keep up (the
 * oldest message's age, throttles) and a client that could not deliver (API 5xx, an audit function
 * error or throttle). Every function has an error alarm. Every alarm notifies
 * the SNS topic given (alarm and OK); without one they only show in the console, and synth says so.
 * docs/deployment.md ("Alarms") says what each means and what to do.
 */
import { Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  type Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { DestinationQueue } from './event-pipeline.js';
import type { SvcFunction } from './svc-function.js';

/** Default of the oldest-message alarm: well above the longest batching window an SQS event source allows (300 s). */
export const DEFAULT_OLDEST_MESSAGE_ALARM = Duration.minutes(15);
/** Default of the API 5xx alarm: percent of requests over five minutes. */
export const DEFAULT_API_5XX_PERCENT = 1;

/** Periods: SQS and Lambda publish one-minute metrics; the API rate is judged over five minutes of traffic. */
const MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

export interface AlarmsProps {
  /** The destinations' queues, dead-letter queues and writers. */
  destinations: readonly DestinationQueue[];
  /** The audit API, when deployed. */
  api?: HttpApi | undefined;
  /** The audit API's function, when deployed. */
  auditFunction?: SvcFunction | undefined;
  /** SNS topic for every alarm's alarm and OK actions. */
  topicArn?: string | undefined;
  /** Age of the oldest message above which a queue alarms. */
  oldestMessageAge?: Duration;
  /** Percentage of API requests answered with 5xx above which the API alarms. */
  api5xxPercent?: number;
}

export class Alarms extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const topic = props.topicArn ? Topic.fromTopicArn(this, 'Topic', props.topicArn) : undefined;
    const oldest = props.oldestMessageAge ?? DEFAULT_OLDEST_MESSAGE_ALARM;
    const percent = props.api5xxPercent ?? DEFAULT_API_5XX_PERCENT;

    const add = (alarm: Alarm) => {
      if (topic) {
        alarm.addAlarmAction(new SnsAction(topic));
        alarm.addOkAction(new SnsAction(topic));
      }
      this.alarms.push(alarm);
    };
    // One datapoint decides: every threshold is already a count or a duration, so waiting for more
    // periods would only delay the news. No data means nothing happened (an idle queue or function).
    const alarm = (
      alarmId: string,
      metric: IMetric,
      threshold: number,
      description: string,
      operator = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    ) =>
      add(
        new Alarm(this, alarmId, {
          metric,
          threshold,
          evaluationPeriods: 1,
          comparisonOperator: operator,
          treatMissingData: TreatMissingData.NOT_BREACHING,
          alarmDescription: description,
        }),
      );

    for (const d of props.destinations) {
      const name = d.destination;
      const id = d.node.id;
      alarm(
        `${id}DeadLetters`,
        d.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
        1,
        `Svc ${name}: messages in the dead-letter queue. The ${name} writer failed on them ${d.maxReceiveCount} times; read its log, fix the cause, then redrive them (docs/deployment.md#alarms).`,
      );
      alarm(
        `${id}OldestMessage`,
        d.queue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' }),
        oldest.toSeconds(),
        `Svc ${name}: the oldest message has waited over ${oldest.toHumanString()}. The ${name} writer is failing, throttled or too slow for the traffic (docs/deployment.md#alarms).`,
        ComparisonOperator.GREATER_THAN_THRESHOLD,
      );
      const writer = d.writer;
      if (!writer) continue;
      alarm(
        `${id}WriterErrors`,
        writer.metricErrors({ period: MINUTE, statistic: 'Sum' }),
        1,
        `Svc ${name}: the writer function failed (an invocation error, not a reported item failure). Read its log (docs/deployment.md#alarms).`,
      );
      alarm(
        `${id}WriterThrottles`,
        writer.metricThrottles({ period: MINUTE, statistic: 'Sum' }),
        1,
        `Svc ${name}: the writer function was throttled; its batches return to the queue and count towards maxReceiveCount (docs/deployment.md#alarms).`,
      );
    }

    const audit = props.auditFunction;
    if (audit) {
      alarm(
        'AuditFunctionErrors',
        audit.metricErrors({ period: MINUTE, statistic: 'Sum' }),
        1,
        "Svc audit API: the audit function failed (a crash, a timeout, a cold start that could not load the config or fetch its secrets); those requests got an error and the client must retry them. Read the audit function's log (docs/deployment.md#alarms).",
      );
      alarm(
        'AuditFunctionThrottles',
        audit.metricThrottles({ period: MINUTE, statistic: 'Sum' }),
        1,
        'Svc audit API: the audit function was throttled: its reserved concurrency (Svc.auditEvents.aws.reservedConcurrency) or the account is exhausted, and those requests failed (docs/deployment.md#alarms).',
      );
    }

    const api = props.api;
    const requests = api?.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const serverErrors = api?.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    const clientErrors = api?.metricClientError({ period: FIVE_MINUTES, statistic: 'Sum' });
    if (requests && serverErrors) {
      const rate = new MathExpression({
        expression: 'IF(requests > 0, 100 * errors / requests, 0)',
        usingMetrics: { requests, errors: serverErrors },
        period: FIVE_MINUTES,
        label: 'API 5xx (% of requests)',
      });
      alarm(
        'Api5xxRate',
        rate,
        percent,
        `Svc audit API: over ${percent}% of requests answered 5xx in five minutes; clients must retry those events. Read the audit function's log (docs/deployment.md#alarms).`,
        ComparisonOperator.GREATER_THAN_THRESHOLD,
      );
    }

    // No dashboard name: names are per account across regions, so CloudFormation makes a unique one.
    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    const per = (pick: (d: DestinationQueue) => Metric | undefined) =>
      props.destinations.flatMap((d) => {
        const metric = pick(d);
        return metric ? [metric.with({ label: d.destination })] : [];
      });
    const graph = (title: string, left: IMetric[]) => new GraphWidget({ title, left, width: 8 });
    this.dashboard.addWidgets(
      graph(
        'Queue depth (messages)',
        per((d) => d.queue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' })),
      ),
      graph(
        'Oldest message (seconds)',
        per((d) => d.queue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' })),
      ),
      graph(
        'Dead letters (messages)',
        per((d) =>
          d.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
        ),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Writer errors',
        per((d) => d.writer?.metricErrors({ period: MINUTE, statistic: 'Sum' })),
      ),
      graph(
        'Writer throttles',
        per((d) => d.writer?.metricThrottles({ period: MINUTE, statistic: 'Sum' })),
      ),
      graph(
        'Writer duration (ms, p99)',
        per((d) => d.writer?.metricDuration({ period: MINUTE, statistic: 'p99' })),
      ),
    );
    const auditWidgets = [
      ...(requests && serverErrors && clientErrors
        ? [
            new GraphWidget({
              title: 'Audit API requests',
              left: [
                requests.with({ label: 'requests' }),
                clientErrors.with({ label: '4xx' }),
                serverErrors.with({ label: '5xx' }),
              ],
              width: audit ? 16 : 24,
            }),
          ]
        : []),
      ...(audit
        ? [
            new GraphWidget({
              title: 'Audit function errors and throttles',
              left: [
                audit.metricErrors({ period: MINUTE, statistic: 'Sum', label: 'errors' }),
                audit.metricThrottles({ period: MINUTE, statistic: 'Sum', label: 'throttles' }),
              ],
              width: 8,
            }),
          ]
        : []),
    ];
    if (auditWidgets.length > 0) this.dashboard.addWidgets(...auditWidgets);
  }
}
