/**
 * Typed templates of JSON built in SQL: a value of type T where any part may be an SQL expression
 * standing for a value of that part's type. The bench fill writes its events' data this way, so the
 * event contract (src/eventstore/events.ts) checks the shapes while SQL varies the values per row.
 */

/** An SQL expression of the enclosing query, standing for a JSON value of type T. */
export class SqlValue<T> {
  declare private readonly value: T;
  constructor(readonly text: string) {}
}

export const sqlValue = <T>(text: string): SqlValue<T> => new SqlValue<T>(text);

type Plain<T> = T extends string | number | boolean | null | undefined ? T : T extends object ? { [K in keyof T]: JsonbTemplate<T[K]> } : T;

/** T, where any part may be an SqlValue of that part's type. */
export type JsonbTemplate<T> = SqlValue<T> | Plain<T>;

const quote = (text: string): string => `'${text.replace(/'/g, "''")}'`;

const holdsSql = (value: unknown): boolean =>
  value instanceof SqlValue || (typeof value === 'object' && value !== null && Object.values(value).some(holdsSql));

/** The SQL expression (jsonb) of a template: constants as jsonb literals, objects holding SQL by jsonb_build_object. */
export function jsonbOf<T>(template: JsonbTemplate<T>): string {
  if (template instanceof SqlValue) return template.text;
  if (Array.isArray(template) && holdsSql(template)) return `jsonb_build_array(${template.map((item) => jsonbOf<unknown>(item)).join(', ')})`;
  if (typeof template === 'object' && template !== null && holdsSql(template)) {
    const fields = Object.entries(template).filter(([, value]) => value !== undefined);
    return `jsonb_build_object(${fields.map(([key, value]) => `${quote(key)}, ${jsonbOf<unknown>(value)}`).join(', ')})`;
  }
  return `${quote(JSON.stringify(template))}::jsonb`;
}
