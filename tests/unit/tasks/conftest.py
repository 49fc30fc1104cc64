import pytest
from pytest_httpserver import HTTPServer

from tests.unit.tasks.shop import Shop


@pytest.fixture
def shop(httpserver: HTTPServer) -> Shop:
    return Shop(httpserver)
