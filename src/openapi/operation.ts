import type { Json, JsonObject } from './json.js';

/** Who may call an operation; the document turns it into security requirements and the errors of each. */
export type Access =
  /** Anyone. */
  | 'public'
  /**
   * An access token of the path's account (docs/spec.md 5) from a server, or a browser key of it
   * from a page of one of the key's origins (docs/browser.md); never a cookie.
   */
  | 'ingest'
  /**
   * A Segment write key (docs/segment.md): an access token of any account from a server, or a
   * browser key from a page of its origins, as HTTP Basic user name or `writeKey` in the body.
   */
  | 'writeKey'
  /** An `ingest+read` token or session of the path's account, or operator credentials. */
  | 'account'
  /** The admin token or an operator session. */
  | 'operator';

/** An Example Object (a type, not an interface, so that it is a JsonObject). */
export type Example = {
  summary: string;
  value: Json;
};

/** One route of the express app as the document describes it, written once here. */
export interface OperationDoc {
  /** `options`: the CORS preflight of a path under /v1, answered before any route (src/http/cors.ts). */
  method: 'get' | 'post' | 'patch' | 'delete' | 'options';
  /** The express route pattern (`/v1/accounts/:license/users`): the document's path is made from it. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  /** Security requirements other than those of `access` (the session calls). */
  security?: JsonObject[];
  /** Whether it needs the database or event store: 503 when they cannot be reached. */
  usesStore: boolean;
  /** Query and header parameters (path parameters come from the path). */
  parameters?: JsonObject[];
  /**
   * A JSON request body: its schema, examples and what the limit is; `optional` when the call may go
   * without one; `textPlain` when it may also come as `text/plain` holding the same JSON.
   */
  body?: { schema: JsonObject; description: string; examples?: Record<string, Example>; optional?: boolean; textPlain?: boolean };
  /** Replies by status: the success ones and the errors particular to the operation. */
  responses: Record<string, JsonObject>;
}

/** A JSON reply of `schema` (a JSON Schema or reference). */
export function jsonReply(description: string, schema: JsonObject, headers?: JsonObject): JsonObject {
  const reply: JsonObject = { description, content: { 'application/json': { schema } } };
  if (headers) reply.headers = headers;
  return reply;
}
