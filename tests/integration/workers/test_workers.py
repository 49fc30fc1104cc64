"""Audits over REST, run by real worker processes on RabbitMQ and PostgreSQL, to `done` with a signed
webhook; and a broker that cannot be reached at dispatch answers 503 with a full refund."""

import json
import socket
from pathlib import Path

import pytest
from worker_doubles import (
    STARTING_CREDITS,
    SiteServer,
    WebhookReceiver,
    Workers,
    make_api,
    signature_verifies,
    wait_until,
    worker_env,
)

from siteaudit.domain.credit import EntryKind
from siteaudit.ports.repository import TeamAuditQuery
from siteaudit.services.webhook import person_webhook_secret

pytestmark = [pytest.mark.postgres, pytest.mark.rabbitmq]


def test_an_audit_started_over_rest_runs_on_worker_processes_to_done_and_the_receiver_gets_one_signed_call(
    database_url: str,
    rabbitmq_url: str,
    queue_prefix: str,
    secret_key: str,
    ca_file: str,
    site: SiteServer,
    receiver: WebhookReceiver,
    tmp_path: Path,
) -> None:
    api = make_api(
        database_url=database_url, broker_url=rabbitmq_url, secret_key=secret_key, prefix=queue_prefix
    )
    workers = Workers(
        worker_env(
            database_url=database_url,
            broker_url=rabbitmq_url,
            secret_key=secret_key,
            prefix=queue_prefix,
            ca_file=ca_file,
            webhooks_every_s="1",
            reap_every_s="2",
        ),
        count=2,
        log_dir=tmp_path,
    )
    workers.start()
    try:
        answer = api.client.simulate_post(
            "/v1/crawls",
            json={"url": site.url, "max_pages": 20, "max_rps": 3, "webhook_url": receiver.url},
            headers=api.auth(),
        )
        assert answer.status_code == 202, answer.text
        crawl_id = answer.json["crawl_id"]

        def status() -> str:
            return str(api.client.simulate_get(f"/v1/crawls/{crawl_id}", headers=api.auth()).json["status"])

        assert wait_until(lambda: status() == "done", timeout_s=60), (status(), workers.logs())
        report = api.client.simulate_get(f"/v1/crawls/{crawl_id}/report", headers=api.auth())
        assert report.status_code == 200 and report.json["crawl_id"] == crawl_id
        assert wait_until(lambda: len(receiver.calls) >= 1, timeout_s=30), workers.logs()
        wait_until(lambda: False, timeout_s=3)  # a second call, if any, would arrive now
    finally:
        workers.stop()
    assert len(receiver.calls) == 1
    [call] = receiver.calls
    secret = person_webhook_secret(api.emails[0], rotate=False, uow=api.app.uow(), secrets=api.app.secrets)
    assert signature_verifies(secret, call)
    assert not signature_verifies(secret + "x", call)
    body = json.loads(call.body)
    assert body["crawl_id"] == crawl_id and body["status"] == "done" and body["pages_crawled"] == 5
    with api.app.uow() as uow:
        user = uow.users.by_email(api.emails[0])
        entries = [e for e in uow.credits.entries(user.id) if e.reference == f"audit:{crawl_id}"]
        balance = uow.credits.balance(user.id)
    assert sorted(e.kind for e in entries) == sorted([EntryKind.RESERVE, EntryKind.RELEASE, EntryKind.CHARGE])
    assert balance == STARTING_CREDITS - 5 * 10


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.postgres
def test_a_broker_that_cannot_be_reached_at_dispatch_answers_503_dispatch_failed_and_refunds_in_full(
    database_url: str, secret_key: str, site: SiteServer
) -> None:
    api = make_api(
        database_url=database_url,
        broker_url=f"amqp://guest:guest@127.0.0.1:{_closed_port()}/%2F",
        secret_key=secret_key,
        prefix="unreachable_",
    )
    answer = api.client.simulate_post(
        "/v1/crawls", json={"url": site.url, "max_pages": 50}, headers=api.auth()
    )
    assert answer.status_code == 503, answer.text
    assert answer.json["error"]["code"] == "dispatch_failed"
    with api.app.uow() as uow:
        user = uow.users.by_email(api.emails[0])
        audits, total = uow.audits.list(TeamAuditQuery(team=uow.teams.of_user(user.id)[0].id))
        entries = uow.credits.entries(user.id)
        balance = uow.credits.balance(user.id)
    assert total == 1 and audits[0].status == "failed"
    assert audits[0].failure_reason is not None and audits[0].failure_reason.startswith("dispatch_failed: ")
    assert balance == STARTING_CREDITS
    assert sorted(e.amount for e in entries if e.kind is not EntryKind.GRANT) == [-500, 0, 500]
