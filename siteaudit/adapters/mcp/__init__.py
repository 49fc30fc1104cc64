"""The agent tool server (MCP): the tool table (`tools`), the SDK server over it (`server`), and its two
transports, streamable HTTP at `/mcp` on the service (`http`) and stdio for `siteaudit mcp` (`stdio`).
`tools` and `params` import nothing of the SDK, so the CLI's tool commands load no SDK."""
