"""The one implementation of the application interface: each use case bound to the driven ports.

`LocalApplication` (`local.py`) is the union of a module per role of `siteaudit.ports.application`
(`callers.py`, `jobs.py`, `admin.py`, `keys.py`, `web.py`, `devices.py`, `payments.py`), each a class of
methods over the ports and terms `LocalPorts` (`base.py`) holds, given once by `siteaudit.bootstrap`. A
declared use case runs through `handle` and the registry's handlers; every other method is one call into
the use case that does the work. This module only re-exports.
"""

from siteaudit.services.application.local import LocalApplication

__all__ = ["LocalApplication"]
