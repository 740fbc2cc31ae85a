import { expect } from 'chai';
import { createApp } from '../src/http/app.js';
import { routeLabel, routePatterns } from '../src/http/route-label.js';
import { TestApp } from './support/app.js';
import { expressRoutes } from './support/express-routes.js';

describe('route labels (int)', () => {
  let app: TestApp;
  before(async () => {
    app = await TestApp.start();
  });
  after(() => app.stop());

  it('labels each route the app serves by its own pattern, and no route it does not serve', () => {
    const routes = [...new Set(expressRoutes(createApp(app.services)).map((route) => route.path))];
    // The walk reaches the routes of routers mounted under a path.
    expect(routes).to.include('/admin/v1/accounts/:license/leads/:id');
    expect([...routes].sort()).to.deep.equal([...routePatterns].sort());
    for (const route of routes) expect(routeLabel(route.replace(/:[A-Za-z]+/g, 'x1')), route).to.equal(route);
  });
});
