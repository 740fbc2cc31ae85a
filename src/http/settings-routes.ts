import { Router, type Request, type Response } from 'express';
import type { AddressPolicies } from '../accounts/address-policy.js';
import { badRequest } from '../errors.js';
import { addressPolicies as policyNames, isAddressPolicy, type AddressPolicy } from '../ingest/segment-context.js';
import { accountOf, accountReadAuth, type Credentials } from './auth.js';
import { checkedJsonBody } from './params.js';

const settingsBodyBytes = 4 * 1024;

/** An account's settings, as the API gives them. */
export interface AccountSettings {
  addressPolicy: AddressPolicy;
}

/** The settings a PATCH body changes, or a refusal naming the field. */
function settingsChange(body: unknown): AccountSettings {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
  const { addressPolicy, ...rest } = body as { addressPolicy?: unknown };
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw badRequest(`unknown field ${JSON.stringify(unknown.slice(0, 50))}: the settings are addressPolicy`);
  if (addressPolicy === undefined) throw badRequest('body must set addressPolicy');
  if (!isAddressPolicy(addressPolicy)) throw badRequest(`addressPolicy must be one of ${policyNames.join(', ')}`);
  return { addressPolicy };
}

/**
 * An account's settings (docs/segment.md, "Context"), under /admin/v1/accounts/:license: what it
 * keeps of a visitor's address. `policies` is the app's one instance, the one Segment's routes read,
 * so that a change is in effect at once in this process (within its cache's 30 seconds in others).
 */
export function settingsRoutes(credentials: Credentials, policies: AddressPolicies): Router {
  const router = Router({ mergeParams: true });
  const auth = accountReadAuth(credentials);

  const settings = router.route('/settings');
  settings.get(auth, async (_req: Request, res: Response) => {
    const reply: AccountSettings = { addressPolicy: await policies.of(accountOf(res).id) };
    res.json(reply);
  });

  settings.patch(auth, ...checkedJsonBody(settingsBodyBytes), async (req: Request, res: Response) => {
    const { addressPolicy } = settingsChange(req.body);
    const account = accountOf(res);
    await policies.set(account.id, addressPolicy);
    req.log.info({ accountId: account.id, addressPolicy }, 'address policy changed');
    const reply: AccountSettings = { addressPolicy: await policies.of(account.id) };
    res.json(reply);
  });
  return router;
}
