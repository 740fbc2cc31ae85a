import { addressPolicies, defaultAddressPolicy } from '../ingest/segment-context.js';
import { takingAdminToken } from './admin-operations.js';
import { closedObject, type JsonObject } from './json.js';
import { jsonReply, type OperationDoc } from './operation.js';

/** An account's settings (docs/segment.md, "Context"): what it keeps of a visitor's address. */

const addressPolicy: JsonObject = {
  type: 'string',
  enum: [...addressPolicies],
  description:
    "What the account keeps of a visitor's address (a Segment message's `context.ip`, or the address of the page that sent it) as the lead attribute `ip`: " +
    '`keep` all of it; `truncate` its network part only (IPv4 without its last octet, `203.0.113.0`; IPv6 its first 48 bits, `2001:db8:85a3::`); `drop` nothing. ' +
    `New accounts: \`${defaultAddressPolicy}\`. Applies to what is sent after the change; what is stored stays as it is.`,
};

const settings = closedObject({ addressPolicy }, { title: "An account's settings" });
const settingsPath = '/admin/v1/accounts/:license/settings';

export const settingsOperations: OperationDoc[] = takingAdminToken([
  {
    method: 'get',
    path: settingsPath,
    operationId: 'get-account-settings',
    tag: 'Segment',
    summary: "The account's settings",
    description: "What the account keeps of a visitor's address.",
    access: 'account',
    usesStore: true,
    responses: { 200: jsonReply('The settings.', settings) },
  },
  {
    method: 'patch',
    path: settingsPath,
    operationId: 'change-account-settings',
    tag: 'Segment',
    summary: "Change the account's settings",
    description:
      'In effect at once in this process, within 30 seconds in the others. A value other than those listed, a body without `addressPolicy`, or another field: 400 naming it.',
    access: 'account',
    usesStore: true,
    body: {
      schema: settings,
      description: 'JSON of at most 4 KB.',
      examples: { keep: { summary: 'Keep whole addresses', value: { addressPolicy: 'keep' } }, drop: { summary: 'Keep no address', value: { addressPolicy: 'drop' } } },
    },
    responses: { 200: jsonReply('Changed: the settings now.', settings) },
  },
]);
