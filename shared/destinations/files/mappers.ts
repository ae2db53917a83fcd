/** The file mappers: rows and columns of parquet and table files, from the audit data model table. */
import { AUDIT_COLUMNS, type CellValue, type ColumnType } from '../../audit/datamodel.js';
import type { TagItem } from '../../platform/tags.js';
import type { AuditQueuedEvent } from '../../queue/events.js';

/** One row: every column's value, then the static tags (as strings). */
export function auditRow(q: AuditQueuedEvent, staticTags: readonly TagItem[] = []): Record<string, CellValue> {
  const row: Record<string, CellValue> = {};
  for (const column of AUDIT_COLUMNS) row[column.name] = column.get(q);
  for (const tag of staticTags) row[tag.name] = tag.value;
  return row;
}

/** The columns of a file: the built-in ones, then one string column per static tag. */
export function auditFileColumns(staticTags: readonly TagItem[] = []): { name: string; type: ColumnType }[] {
  return [
    ...AUDIT_COLUMNS.map((c) => ({ name: c.name, type: c.type })),
    ...staticTags.map((t) => ({ name: t.name, type: 'string' as const })),
  ];
}
