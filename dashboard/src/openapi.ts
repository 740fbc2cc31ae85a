/** The OpenAPI document of /openapi.json, as far as the API reference page reads it. */

/** A JSON Schema of the OpenAPI document, as far as the API reference page shows it. */
export interface OpenApiSchema {
  $ref?: string;
  title?: string;
  description?: string;
  type?: string | string[];
  format?: string;
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  oneOf?: OpenApiSchema[];
  items?: OpenApiSchema;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  additionalProperties?: boolean | OpenApiSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxProperties?: number;
  pattern?: string;
}

/** A parameter, header, response or request body: each may be a `$ref` into the components. */
export interface OpenApiPart {
  $ref?: string;
  name?: string;
  in?: string;
  required?: boolean;
  description?: string;
  schema?: OpenApiSchema;
  headers?: Record<string, OpenApiPart>;
  content?: Record<string, { schema?: OpenApiSchema; examples?: Record<string, { summary?: string; value: unknown }> }>;
}

export interface OpenApiOperation {
  operationId: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: OpenApiPart[];
  requestBody?: OpenApiPart;
  responses: Record<string, OpenApiPart>;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, OpenApiSchema>;
    headers?: Record<string, OpenApiPart>;
    securitySchemes?: Record<string, { type: string; description?: string }>;
    [section: string]: Record<string, unknown> | undefined;
  };
}
