"""What an audit covers at the REST door (docs/audits.md): the scope inputs are declared
(`services/audits/usecases.py`, `services/sites/usecases.py`) and read by the derived door; a body with a
full list of the longest URLs is read whole."""

from typing import Final

from siteaudit.adapters.rest.params import MAX_BODY_BYTES
from siteaudit.domain.scope import MAX_LISTED_URLS
from siteaudit.domain.site import MAX_URL_LENGTH

# The room the derived door reads a new audit's body with (`derived.py`, a `counted` list's room).
LIST_BODY_BYTES: Final = MAX_BODY_BYTES + MAX_LISTED_URLS * (MAX_URL_LENGTH + 8)
