import { ByteWriter, ParquetWriter, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { columnsOf, type Column } from './columns.js';
import type { ExportedEvent, ExportKind } from './exported-event.js';

/**
 * A Parquet file of one kind (docs/export.md, Parquet), written as the export goes: a row group a
 * page, each sent on as soon as it is encoded, and the footer at the end. Only a whole file can be
 * read: one cut off is asked for again.
 */

const elementOf = (column: Column): SchemaElement => {
  if (column.type === 'timestamp') return { name: column.name, type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', repetition_type: 'OPTIONAL' };
  return { name: column.name, type: 'BYTE_ARRAY', converted_type: column.type === 'json' ? 'JSON' : 'UTF8', repetition_type: 'OPTIONAL' };
};

function valueOf(column: Column, event: ExportedEvent): unknown {
  const value = column.value(event);
  if (value === undefined || value === null) return null;
  if (column.type === 'timestamp') return typeof value === 'string' ? new Date(value) : null;
  if (column.type === 'string') return typeof value === 'string' ? value : JSON.stringify(value);
  return value;
}

export class ParquetExport {
  private readonly bytes = new ByteWriter();
  private readonly writer: ParquetWriter;
  private readonly columns: readonly Column[];

  constructor(kind: ExportKind) {
    this.columns = columnsOf[kind];
    const schema: SchemaElement[] = [{ name: 'root', num_children: this.columns.length }, ...this.columns.map(elementOf)];
    this.writer = new ParquetWriter({ writer: this.bytes, schema, kvMetadata: [{ key: 'tracking.kind', value: kind }] });
  }

  /** The file's bytes so far not yet taken (its first: the magic number). */
  private take(): Uint8Array {
    const taken = this.bytes.getBytes().slice();
    this.bytes.index = 0;
    return taken;
  }

  /** The start of the file: its magic number. */
  start(): Uint8Array {
    return this.take();
  }

  /** A row group of these events, as bytes to send on. */
  rows(events: readonly ExportedEvent[]): Uint8Array {
    if (events.length > 0) {
      const columnData: ColumnSource[] = this.columns.map((column) => ({ name: column.name, data: events.map((event) => valueOf(column, event)) }));
      void this.writer.write({ columnData, rowGroupSize: events.length });
    }
    return this.take();
  }

  /** The end of the file: its indexes and footer. */
  end(): Uint8Array {
    void this.writer.finish();
    return this.take();
  }
}
