/** JSON values: what the OpenAPI document is made of. */
export type Json = string | number | boolean | null | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/** A reference to a schema of the document's components. */
export const schemaRef = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

/** A string, integer, ... that may also be null. */
export const orNull = (type: string, more: JsonObject = {}): JsonObject => ({ type: [type, 'null'], ...more });

/** An object whose listed properties are all required and that has no others. */
export function closedObject(properties: Record<string, JsonObject>, more: JsonObject = {}): JsonObject {
  return { type: 'object', required: Object.keys(properties), properties, additionalProperties: false, ...more };
}

/** `object` (a closedObject) with properties that may be left out. */
export function withOptional(object: JsonObject, optional: Record<string, JsonObject>): JsonObject {
  return { ...object, properties: { ...(object.properties as JsonObject), ...optional } };
}
