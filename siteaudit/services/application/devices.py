"""The device's side of a device login (`DeviceFlow`; docs/security.md "Device login")."""

from siteaudit.domain.device import DeviceLogin
from siteaudit.ports.application import DeviceGranted, DeviceLoginStarted
from siteaudit.services.application.base import LocalPorts
from siteaudit.services.device import flow as device_flow


class LocalDeviceFlow(LocalPorts):
    """`DeviceFlow` over the application's ports."""

    __slots__ = ()

    def start_device_login(self, client_name: str, requested_ip: str) -> DeviceLoginStarted:
        started = self._call(device_flow.start_device_login, client_name, requested_ip)
        return started.answer(self.public_url)

    def poll_device_login(self, device_code: str) -> DeviceGranted:
        return self._call(device_flow.poll_device_login, device_code)

    def cancel_device_login(self, device_code: str) -> DeviceLogin:
        return self._call(device_flow.cancel_device_login, device_code)
