/** The four kinds of item an import sends, named as their endpoints are. */
export const importKinds = ['users', 'events', 'products', 'productsevents'] as const;
export type ImportKind = (typeof importKinds)[number];

export function isImportKind(value: string | undefined): value is ImportKind {
  return (importKinds as readonly (string | undefined)[]).includes(value);
}

/**
 * One record of the input file, numbered by the line it starts on: an item to send, or why it
 * cannot be one (with the input as read, for the rejected-lines file), or why nothing after it
 * can be read (`stop`: where the next record starts cannot be known).
 */
export type ImportRecord =
  | { line: number; item: Record<string, unknown> }
  | { line: number; problem: string; input: string }
  | { line: number; stop: string };
