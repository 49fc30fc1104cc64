"""`siteaudit worker --queues`: the queues a worker process takes (docs/operations.md "Workers for
finalisation"), every one by default, an unknown name refused before anything starts."""

import pytest
from click.testing import CliRunner

from siteaudit.entrypoints.cli import _worker_queues, main


@pytest.mark.parametrize(
    ("given", "queues"),
    [
        ((), ("crawl", "finalize", "webhooks")),
        (("finalize",), ("finalize",)),
        (("crawl,webhooks",), ("crawl", "webhooks")),
        (("webhooks", " crawl , crawl"), ("webhooks", "crawl")),
    ],
)
def test_the_queues_given_in_one_option_or_several_are_taken_once_each_and_all_without_it(
    given: tuple[str, ...], queues: tuple[str, ...]
) -> None:
    assert _worker_queues(given) == queues


@pytest.mark.parametrize(
    ("option", "error"),
    [
        ("crawl,finalise", "no queue named 'finalise': the queues are crawl, finalize, webhooks"),
        ("webhook", "no queue named 'webhook': the queues are crawl, finalize, webhooks"),
        (" , ", "name one or more of crawl, finalize, webhooks"),
    ],
)
def test_an_unknown_queue_name_stops_the_worker_before_it_starts_with_the_names_there_are(
    option: str, error: str
) -> None:
    result = CliRunner().invoke(
        main, ["worker", "--queues", option], env={"SITEAUDIT_BROKER_URL": "amqp://127.0.0.1:1/"}
    )
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--queues'" in result.stderr and error in result.stderr
    assert "Traceback" not in result.output
