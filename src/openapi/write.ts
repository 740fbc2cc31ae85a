import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { openApiDocumentPath } from '../paths.js';
import { openApiDocument } from './document.js';

/** `npm run build`, after tsc: writes the OpenAPI document that GET /openapi.json serves. */
mkdirSync(dirname(openApiDocumentPath), { recursive: true });
writeFileSync(openApiDocumentPath, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
