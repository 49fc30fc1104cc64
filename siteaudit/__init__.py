"""siteaudit: crawls websites and reports technical search-optimisation problems."""

__version__ = "0.1.0"
