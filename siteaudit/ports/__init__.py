"""Ports: the Protocols the services need from the outside world. Docstrings state each contract."""
