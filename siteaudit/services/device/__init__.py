"""Device login (docs/security.md "Device login"): the feature package (docs/architecture.md), with no
declared use case. The device's side (`flow`) runs without a key, for a client address; the app's side
(`approval`) for a browser session. The declared use cases are a key holder's (`handle(use_case, caller)`),
so neither fits them: the REST door keeps its three `/v1/device/*` resources and the app its page."""
