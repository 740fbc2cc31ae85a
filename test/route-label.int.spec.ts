import { expect } from 'chai';
import { createApp } from '../src/http/app.js';
import { routeLabel, routePatterns } from '../src/http/route-label.js';
import { TestApp } from './support/app.js';

/** What this test reads of express's router: a route's path(s), or a mounted router's path and layers. */
interface Layer {
  route?: { path: string | string[] };
  rawPath?: string | string[];
  handle: { stack?: Layer[] };
}

/** Every route path registered under `stack`, with the paths its routers are mounted at. */
function routePaths(stack: readonly Layer[], mountedAt = ''): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) return [layer.route.path].flat().map((path) => mountedAt + path);
    const inner = layer.handle.stack;
    if (!inner) return [];
    const mount = [layer.rawPath ?? '/'].flat();
    return mount.flatMap((path) => routePaths(inner, mountedAt + (path === '/' ? '' : path)));
  });
}

describe('route labels (int)', () => {
  let app: TestApp;
  before(async () => {
    app = await TestApp.start();
  });
  after(() => app.stop());

  it('labels each route the app serves by its own pattern, and no route it does not serve', () => {
    const routes = routePaths(createApp(app.services).router.stack as unknown as Layer[]);
    // The walk reaches the routes of routers mounted under a path.
    expect(routes).to.include('/admin/v1/accounts/:license/leads/:id');
    expect([...routes].sort()).to.deep.equal([...routePatterns].sort());
    for (const route of routes) expect(routeLabel(route.replace(/:[A-Za-z]+/g, 'x1')), route).to.equal(route);
  });
});
