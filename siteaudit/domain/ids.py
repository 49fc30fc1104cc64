"""Identifiers of the service's aggregates: distinct types so a site id never passes for an audit id."""

from typing import NewType

UserId = NewType("UserId", int)
TeamId = NewType("TeamId", int)
AuditId = NewType("AuditId", int)
SiteId = NewType("SiteId", int)
ApiKeyId = NewType("ApiKeyId", int)
RecheckId = NewType("RecheckId", int)
DeviceLoginId = NewType("DeviceLoginId", int)
TaskKey = NewType("TaskKey", str)
