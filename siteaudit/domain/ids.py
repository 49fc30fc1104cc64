"""Identifiers of the service's aggregates: distinct types so a site id never passes for an audit id."""

from typing import Final, NewType

# The largest id any door reads (a 64-bit database integer holds it; a bigger number is no row).
MAX_ID: Final = 2**62

UserId = NewType("UserId", int)
TeamId = NewType("TeamId", int)
AuditId = NewType("AuditId", int)
SiteId = NewType("SiteId", int)
ApiKeyId = NewType("ApiKeyId", int)
RecheckId = NewType("RecheckId", int)
DeviceLoginId = NewType("DeviceLoginId", int)
TaskKey = NewType("TaskKey", str)
