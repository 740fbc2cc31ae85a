import { Router, type Request, type Response } from 'express';
import { badRequest, notFound } from '../errors.js';
import {
  decodeProductEventsCursor,
  decodeProductsCursor,
  findProduct,
  findProductEvents,
  findProducts,
  productIsKnown,
} from '../../projections/products/queries.js';
import type { Pool } from '../db/pool.js';
import { accountOf } from './auth.js';
import { cursorOf, limitOf, stringQuery } from './params.js';

const maxSearchLength = 200;
const unknownProduct = 'no product with this productId (an accepted product is listed here within about a second)';

/**
 * The account's products and their product events (docs/api.md, Products), from the products
 * read model. Mounted by readRoutes behind accountReadAuth: every query is of the authenticated account.
 */
export function productRoutes(pool: Pool): Router {
  const router = Router({ mergeParams: true });

  router.get('/products', async (req: Request, res: Response) => {
    const cursor = cursorOf(req, decodeProductsCursor);
    const q = stringQuery(req, 'q');
    if (q !== undefined && q.length > maxSearchLength) throw badRequest(`q must be at most ${maxSearchLength} characters`);
    res.json(await findProducts(pool, accountOf(res).id, { q, limit: limitOf(req), cursor }));
  });

  router.get('/products/:productId', async (req: Request, res: Response) => {
    const product = await findProduct(pool, accountOf(res).id, req.params.productId as string);
    if (!product) throw notFound(unknownProduct);
    res.json(product);
  });

  // Also the events of a productId never submitted (a product event needs no product): 404 only
  // when the account knows the id from neither.
  router.get('/products/:productId/events', async (req: Request, res: Response) => {
    const cursor = cursorOf(req, decodeProductEventsCursor);
    const limit = limitOf(req);
    const accountId = accountOf(res).id;
    const productId = req.params.productId as string;
    const page = await findProductEvents(pool, accountId, productId, limit, cursor);
    if (page.events.length === 0 && cursor === undefined && !(await productIsKnown(pool, accountId, productId))) throw notFound(unknownProduct);
    res.json(page);
  });

  return router;
}
