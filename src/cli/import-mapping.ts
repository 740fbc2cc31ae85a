import type { FieldType, KindFields } from './import-columns.js';
import { cellAs, customTypes, inferCell, isCustomType, type CellValue, type CustomType } from './import-infer.js';

/** Where a CSV column goes: a top-level field, or a key (path) of the kind's object of free keys. */
export type Column =
  | { header: string; field: string; type: FieldType }
  | { header: string; path: readonly string[]; declared: CustomType | null };

/** A header that no item can be made from; the import stops before sending anything. */
export class HeaderError extends Error {}

/**
 * The columns of a CSV header for `fields`: each a top-level field of the kind, or
 * `<object>.<key>` (`attributes.plan`, `eventData.amount`), optionally with a declared type
 * (`attributes.zip:string`) instead of the type inferred from each cell.
 */
export function parseHeader(fields: KindFields, cells: readonly string[]): Column[] {
  const prefix = `${fields.nested}.`;
  const columns = cells.map((cell, index): Column => {
    const header = cell.trim();
    const where = `column ${index + 1} ('${header}')`;
    if (header === '') throw new HeaderError(`column ${index + 1} of the header is empty`);
    const fieldType = fields.fields.get(header);
    if (fieldType) return { header, field: header, type: fieldType };
    if (!header.startsWith(prefix)) {
      throw new HeaderError(`${where} is not a field of ${fields.kind}: use ${[...fields.fields.keys()].join(', ')} or ${prefix}<key>`);
    }
    const typed = /^(.*):([a-z]+)$/.exec(header.slice(prefix.length));
    const declared = typed?.[2] && isCustomType(typed[2]) ? typed[2] : null;
    const key = declared ? (typed?.[1] ?? '') : header.slice(prefix.length);
    if (typed?.[2] && !declared && fields.flatKeys) {
      throw new HeaderError(`${where}: '${typed[2]}' is not a type; declare one of ${customTypes.join(', ')}`);
    }
    const path = fields.flatKeys ? [key] : key.split('.');
    if (path.some((part) => part === '')) throw new HeaderError(`${where} names no key after '${prefix}'`);
    if (fields.keyPattern && !fields.keyPattern.test(key)) {
      throw new HeaderError(`${where}: ${fields.nested} keys must match ${fields.keyPattern.source}`);
    }
    if (fields.keyMaxLength !== null && key.length > fields.keyMaxLength) {
      throw new HeaderError(`${where}: ${fields.nested} keys have at most ${fields.keyMaxLength} characters`);
    }
    return { header, path, declared };
  });
  checkTargets(fields, columns);
  return columns;
}

function checkTargets(fields: KindFields, columns: readonly Column[]): void {
  const targets = columns.map((column) => ('field' in column ? column.field : `${fields.nested}.${column.path.join('.')}`));
  const seen = new Set<string>();
  for (const target of targets) {
    if (seen.has(target)) throw new HeaderError(`the header has ${target} twice`);
    seen.add(target);
  }
  for (const target of targets) {
    const parent = targets.find((other) => target.startsWith(`${other}.`));
    if (parent) throw new HeaderError(`the header has both ${parent} and ${target}: ${parent} cannot be a value and an object`);
  }
  const missing = fields.required.filter((name) => !seen.has(name));
  if (missing.length > 0) throw new HeaderError(`the header has no ${missing.join(', ')} column: every item of ${fields.kind} needs one`);
  if (fields.anyOf.length > 0 && !fields.anyOf.some((set) => set.every((name) => seen.has(name)))) {
    const options = fields.anyOf.map((set) => set.join(' and ')).join(' or ');
    throw new HeaderError(`the header has no ${options} column: every item of ${fields.kind} needs one`);
  }
}

/**
 * The item of one CSV row, or why the row does not map. An empty cell leaves its field out.
 */
export function mapRow(fields: KindFields, columns: readonly Column[], cells: readonly string[]): { item: Record<string, unknown> } | { problem: string } {
  if (cells.length !== columns.length) {
    return { problem: `the row has ${cells.length} cells and the header ${columns.length} columns` };
  }
  const item: Record<string, unknown> = {};
  const nested = record();
  for (const [index, column] of columns.entries()) {
    const text = cells[index] ?? '';
    if (text === '') continue;
    let value: CellValue;
    if ('field' in column) {
      const read = cellAs(text, column.type);
      if ('problem' in read) return { problem: `${column.header}: ${read.problem}` };
      value = read.value;
      item[column.field] = value;
      continue;
    }
    if (column.declared) {
      const read = cellAs(text, column.declared);
      if ('problem' in read) return { problem: `${column.header}: ${read.problem}` };
      value = read.value;
    } else {
      value = inferCell(text).value;
    }
    setPath(nested, column.path, value);
  }
  if (fields.nestedRequired || Object.keys(nested).length > 0) item[fields.nested] = nested;
  return { item };
}

/**
 * An object without a prototype: keys come from the file, and `__proto__` must stay a key like any
 * other instead of reaching Object.prototype.
 */
function record(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: CellValue): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next === 'object' && next !== null) node = next as Record<string, unknown>;
    else {
      const created = record();
      node[part] = created;
      node = created;
    }
  }
  node[path.at(-1) ?? ''] = value;
}
