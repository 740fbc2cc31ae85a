import type { Express } from 'express';

/** What the tests read of express's router: a route's path(s) and methods, or a mounted router's path and layers. */
interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  rawPath?: string | string[];
  handle: { stack?: Layer[] };
}

export interface ExpressRoute {
  /** Lowercase, as express keeps it: `get`, `post`, `delete`. */
  method: string;
  /** The full route pattern, with the paths its routers are mounted at: `/admin/v1/accounts/:license/leads/:id`. */
  path: string;
}

function walk(stack: readonly Layer[], mountedAt: string): ExpressRoute[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const methods = Object.keys(layer.route.methods).filter((method) => layer.route?.methods[method]);
      return [layer.route.path].flat().flatMap((path) => methods.map((method) => ({ method, path: mountedAt + path })));
    }
    const inner = layer.handle.stack;
    if (!inner) return [];
    const mount = [layer.rawPath ?? '/'].flat();
    return mount.flatMap((path) => walk(inner, mountedAt + (path === '/' ? '' : path)));
  });
}

/** Every route of the app: each method of each path, under the paths its routers are mounted at. */
export function expressRoutes(app: Express): ExpressRoute[] {
  return walk(app.router.stack as unknown as Layer[], '');
}
