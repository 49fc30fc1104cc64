"""Fix impact (SPEC 4.7): thin resources over the application's fix-impact reads. Another team's site
answers 404 `not_found`; `GET /fix-impact` shows only the caller's team's sites."""

import falcon

from siteaudit.adapters.rest.impact_views import site_fix_impact_answer, team_fix_impact_answer
from siteaudit.adapters.rest.params import Fields, known_query
from siteaudit.adapters.rest.resources import Resource
from siteaudit.domain.ids import SiteId


class SiteFixImpact(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ("limit",))
        fields = Fields(req.params, query=True)
        limit = fields.integer("limit", low=1, high=200, default=50)
        fields.done()
        assert limit is not None
        found = self.application.site_fix_impact(SiteId(site_id), req.context.caller, limit=limit)
        resp.media = site_fix_impact_answer(found)


class TeamFixImpact(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        known_query(req, ("limit",))
        fields = Fields(req.params, query=True)
        limit = fields.integer("limit", low=1, high=50, default=10)
        fields.done()
        assert limit is not None
        resp.media = team_fix_impact_answer(self.application.team_fix_impact(req.context.caller, limit=limit))
