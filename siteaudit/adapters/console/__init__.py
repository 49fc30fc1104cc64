"""Search-console providers behind `siteaudit.ports.searchconsole`: Google's API and the demo provider."""
