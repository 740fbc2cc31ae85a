import { readFile, rename, stat, truncate, writeFile } from 'node:fs/promises';
import { CliError } from './context.js';

/**
 * An export written to a file, and where it stands (docs/export.md, The CLI): beside the file, its
 * state (`<file>.export-state`: how many bytes of it are whole events, the cursor after the last of
 * them, and the options it was made with) is replaced after each page is written. A run that finds
 * them cuts the file back to those bytes (what a killed run wrote past them is not counted) and
 * continues from the cursor: no gap, no duplicate, in either format.
 */
export interface ExportFileState {
  bytes: number;
  cursor: string | null;
  /** The options of the export, as given: a later run on this file must give the same. */
  options: Record<string, string>;
}

export const stateFileOf = (file: string): string => `${file}.export-state`;

const sizeOf = async (file: string): Promise<number | null> => {
  try {
    return (await stat(file)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

function parsedState(text: string): ExportFileState | null {
  try {
    const value = JSON.parse(text) as Partial<ExportFileState>;
    const ok = Number.isSafeInteger(value.bytes) && (value.cursor === null || typeof value.cursor === 'string') && typeof value.options === 'object' && value.options !== null;
    return ok ? (value as ExportFileState) : null;
  } catch {
    return null;
  }
}

/**
 * Where an export to `file` begins: a new file (null), or the state of an earlier run on it, the
 * file cut back to its whole events. Refuses a file this command did not write, or wrote with
 * other options.
 */
export async function resumeState(file: string, options: Record<string, string>): Promise<ExportFileState | null> {
  const size = await sizeOf(file);
  const stateText = await readFile(stateFileOf(file), 'utf8').catch(() => null);
  if (size === null || (size === 0 && stateText === null)) return null;
  const state = stateText === null ? null : parsedState(stateText);
  if (state === null) throw new CliError(`${file} exists and is not an export this command can continue (no readable ${stateFileOf(file)}): give another --out, or delete it`);
  if (JSON.stringify(state.options) !== JSON.stringify(options)) {
    throw new CliError(`${file} is an export made with other options (${JSON.stringify(state.options)}): give the same options to continue it, or another --out`);
  }
  if (size < state.bytes) throw new CliError(`${file} is shorter than its export state says (${size} < ${state.bytes} bytes): it was changed; give another --out, or delete both files`);
  if (size > state.bytes) await truncate(file, state.bytes);
  return state;
}

/** Records where the export stands, replacing the state file whole (a kill leaves the old or the new one). */
export async function saveState(file: string, state: ExportFileState): Promise<void> {
  const temporary = `${stateFileOf(file)}.tmp`;
  await writeFile(temporary, JSON.stringify(state));
  await rename(temporary, stateFileOf(file));
}
