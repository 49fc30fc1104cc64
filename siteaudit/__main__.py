"""`python -m siteaudit ...`: the same CLI as the `siteaudit` script, for an agent's configuration when the
script cannot be found (docs/agents.md)."""

from siteaudit.entrypoints.cli import main

if __name__ == "__main__":
    main(prog_name="siteaudit")
