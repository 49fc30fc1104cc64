-- upgrade to 0001
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL,
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
CREATE TABLE crawl_frontier (
	audit_id INTEGER NOT NULL,
	url_id INTEGER NOT NULL,
	depth INTEGER NOT NULL,
	state SMALLINT NOT NULL,
	CONSTRAINT pk_crawl_frontier PRIMARY KEY (audit_id, url_id)
);
CREATE INDEX ix_crawl_frontier_audit_id_state_depth_url_id ON crawl_frontier (audit_id, state, depth, url_id);
CREATE TABLE crawl_issues (
	id INTEGER NOT NULL,
	audit_id INTEGER NOT NULL,
	url_id INTEGER NOT NULL,
	check_code VARCHAR(100) NOT NULL,
	severity SMALLINT NOT NULL,
	template TEXT NOT NULL,
	details JSON NOT NULL,
	CONSTRAINT pk_crawl_issues PRIMARY KEY (id)
);
CREATE INDEX ix_crawl_issues_audit_id_check_code_url_id ON crawl_issues (audit_id, check_code, url_id);
CREATE INDEX ix_crawl_issues_audit_id_severity_check_code_url_id_id ON crawl_issues (audit_id, severity, check_code, url_id, id);
CREATE INDEX ix_crawl_issues_audit_id_template ON crawl_issues (audit_id, template);
CREATE INDEX ix_crawl_issues_audit_id_url_id ON crawl_issues (audit_id, url_id);
CREATE TABLE crawl_links (
	audit_id INTEGER NOT NULL,
	source_id INTEGER NOT NULL,
	target_id INTEGER NOT NULL,
	kind SMALLINT NOT NULL,
	nofollow BOOLEAN NOT NULL,
	internal BOOLEAN NOT NULL
);
CREATE INDEX ix_crawl_links_audit_id_source_id ON crawl_links (audit_id, source_id);
CREATE TABLE crawl_pages (
	audit_id INTEGER NOT NULL,
	url_id INTEGER NOT NULL,
	status_code SMALLINT,
	depth INTEGER NOT NULL,
	title TEXT,
	meta_description TEXT,
	word_count INTEGER NOT NULL,
	blocked_by VARCHAR(100),
	fetch_error VARCHAR(30),
	content_type VARCHAR(200),
	template TEXT NOT NULL,
	in_sitemap BOOLEAN NOT NULL,
	facts JSON NOT NULL,
	CONSTRAINT pk_crawl_pages PRIMARY KEY (audit_id, url_id)
);
CREATE INDEX ix_crawl_pages_audit_id_status_code_url_id ON crawl_pages (audit_id, status_code, url_id);
CREATE INDEX ix_crawl_pages_audit_id_template ON crawl_pages (audit_id, template);
CREATE TABLE users (
	id INTEGER NOT NULL,
	email VARCHAR(254) NOT NULL,
	"plan" VARCHAR(50) NOT NULL,
	name VARCHAR(200) NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_users PRIMARY KEY (id),
	CONSTRAINT uq_users_email UNIQUE (email)
);
CREATE TABLE audits (
	id INTEGER NOT NULL,
	team_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	payer_id INTEGER NOT NULL,
	url TEXT NOT NULL,
	origin VARCHAR(300) NOT NULL,
	created_at DATETIME NOT NULL,
	max_pages INTEGER NOT NULL,
	concurrency INTEGER NOT NULL,
	max_rps FLOAT NOT NULL,
	site_id INTEGER,
	"trigger" VARCHAR(20) NOT NULL,
	status VARCHAR(20) NOT NULL,
	credits_reserved BIGINT NOT NULL,
	verify_token_set BOOLEAN NOT NULL,
	webhook_url TEXT,
	started_at DATETIME,
	finished_at DATETIME,
	archived_at DATETIME,
	failure_reason VARCHAR(500),
	pages_crawled INTEGER NOT NULL,
	pages_not_modified INTEGER NOT NULL,
	health_score SMALLINT,
	partial BOOLEAN NOT NULL,
	version INTEGER NOT NULL,
	CONSTRAINT fk_audits_payer_id_users FOREIGN KEY(payer_id) REFERENCES users (id),
	CONSTRAINT fk_audits_user_id_users FOREIGN KEY(user_id) REFERENCES users (id),
	CONSTRAINT pk_audits PRIMARY KEY (id)
);
CREATE INDEX ix_audits_site_id ON audits (site_id);
CREATE INDEX ix_audits_team_id_created_at ON audits (team_id, created_at);
CREATE INDEX ix_audits_team_id_status_origin ON audits (team_id, status, origin);
CREATE INDEX ix_audits_user_id ON audits (user_id);
CREATE TABLE credit_accounts (
	user_id INTEGER NOT NULL,
	balance BIGINT NOT NULL,
	version INTEGER NOT NULL,
	CONSTRAINT ck_credit_accounts_balance_not_negative CHECK (balance >= 0),
	CONSTRAINT fk_credit_accounts_user_id_users FOREIGN KEY(user_id) REFERENCES users (id),
	CONSTRAINT pk_credit_accounts PRIMARY KEY (user_id)
);
CREATE TABLE credit_entries (
	id INTEGER NOT NULL,
	"key" VARCHAR(200) NOT NULL,
	account INTEGER NOT NULL,
	kind VARCHAR(10) NOT NULL,
	amount BIGINT NOT NULL,
	at DATETIME NOT NULL,
	reference VARCHAR(200) NOT NULL,
	team_id INTEGER,
	CONSTRAINT fk_credit_entries_account_users FOREIGN KEY(account) REFERENCES users (id),
	CONSTRAINT pk_credit_entries PRIMARY KEY (id),
	CONSTRAINT uq_credit_entries_key UNIQUE ("key")
);
CREATE INDEX ix_credit_entries_account_at ON credit_entries (account, at);
CREATE INDEX ix_credit_entries_reference ON credit_entries (reference);
CREATE TABLE teams (
	id INTEGER NOT NULL,
	name VARCHAR(100) NOT NULL,
	owner_id INTEGER NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT fk_teams_owner_id_users FOREIGN KEY(owner_id) REFERENCES users (id),
	CONSTRAINT pk_teams PRIMARY KEY (id),
	CONSTRAINT uq_teams_name UNIQUE (name)
);
CREATE INDEX ix_teams_owner_id ON teams (owner_id);
CREATE TABLE crawl_checkpoints (
	audit_id INTEGER NOT NULL,
	state JSON NOT NULL,
	CONSTRAINT fk_crawl_checkpoints_audit_id_audits FOREIGN KEY(audit_id) REFERENCES audits (id) ON DELETE CASCADE,
	CONSTRAINT pk_crawl_checkpoints PRIMARY KEY (audit_id)
);
CREATE TABLE crawl_reports (
	audit_id INTEGER NOT NULL,
	report JSON NOT NULL,
	CONSTRAINT fk_crawl_reports_audit_id_audits FOREIGN KEY(audit_id) REFERENCES audits (id) ON DELETE CASCADE,
	CONSTRAINT pk_crawl_reports PRIMARY KEY (audit_id)
);
CREATE TABLE crawl_urls (
	audit_id INTEGER NOT NULL,
	id INTEGER NOT NULL,
	"key" BIGINT NOT NULL,
	url TEXT NOT NULL,
	CONSTRAINT fk_crawl_urls_audit_id_audits FOREIGN KEY(audit_id) REFERENCES audits (id) ON DELETE CASCADE,
	CONSTRAINT pk_crawl_urls PRIMARY KEY (audit_id, id),
	CONSTRAINT uq_crawl_urls_audit_id_key UNIQUE (audit_id, "key")
);
CREATE TABLE memberships (
	team_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	role VARCHAR(10) NOT NULL,
	CONSTRAINT fk_memberships_team_id_teams FOREIGN KEY(team_id) REFERENCES teams (id) ON DELETE CASCADE,
	CONSTRAINT fk_memberships_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_memberships PRIMARY KEY (team_id, user_id)
);
CREATE INDEX ix_memberships_user_id ON memberships (user_id);
INSERT INTO alembic_version (version_num) VALUES ('0001') RETURNING version_num;

-- upgrade to 0002
CREATE TABLE device_logins (
	id INTEGER NOT NULL,
	device_code_hash VARCHAR(64) NOT NULL,
	user_code VARCHAR(8) NOT NULL,
	client_name VARCHAR(64) NOT NULL,
	requested_ip VARCHAR(64) NOT NULL,
	created_at DATETIME NOT NULL,
	expires_at DATETIME NOT NULL,
	interval_s FLOAT NOT NULL,
	last_polled_at DATETIME,
	status VARCHAR(10) NOT NULL,
	approved_by INTEGER,
	team_id INTEGER,
	version INTEGER NOT NULL,
	CONSTRAINT pk_device_logins PRIMARY KEY (id),
	CONSTRAINT uq_device_logins_device_code_hash UNIQUE (device_code_hash)
);
CREATE INDEX ix_device_logins_user_code ON device_logins (user_code);
CREATE TABLE fix_tasks (
	site_id INTEGER NOT NULL,
	"key" VARCHAR(16) NOT NULL,
	code VARCHAR(100) NOT NULL,
	template TEXT NOT NULL,
	severity VARCHAR(10) NOT NULL,
	pages INTEGER NOT NULL,
	crawl_id INTEGER NOT NULL,
	created_at DATETIME NOT NULL,
	updated_at DATETIME NOT NULL,
	sample_urls JSON NOT NULL,
	clicks_28d INTEGER,
	impressions_28d INTEGER,
	status VARCHAR(12) NOT NULL,
	status_before_verifying VARCHAR(12),
	recheck_id INTEGER,
	fixed_at DATETIME,
	version INTEGER NOT NULL,
	CONSTRAINT pk_fix_tasks PRIMARY KEY (site_id, "key")
);
CREATE TABLE rate_buckets (
	"key" VARCHAR(200) NOT NULL,
	tat FLOAT NOT NULL,
	CONSTRAINT pk_rate_buckets PRIMARY KEY ("key")
);
CREATE TABLE rechecks (
	id INTEGER NOT NULL,
	site_id INTEGER NOT NULL,
	team_id INTEGER NOT NULL,
	parent_crawl_id INTEGER NOT NULL,
	created_at DATETIME NOT NULL,
	task_key VARCHAR(16),
	codes JSON,
	sampled BOOLEAN NOT NULL,
	duplicate_baseline BOOLEAN NOT NULL,
	status VARCHAR(12) NOT NULL,
	started_at DATETIME,
	finished_at DATETIME,
	time_capped BOOLEAN NOT NULL,
	failure_reason TEXT,
	urls JSON NOT NULL,
	targets JSON NOT NULL,
	observations JSON NOT NULL,
	url_results JSON,
	task_results JSON,
	version INTEGER NOT NULL,
	CONSTRAINT pk_rechecks PRIMARY KEY (id)
);
CREATE INDEX ix_rechecks_site_id ON rechecks (site_id);
CREATE TABLE sites (
	id INTEGER NOT NULL,
	team_id INTEGER NOT NULL,
	url TEXT NOT NULL,
	host VARCHAR(300) NOT NULL,
	origin VARCHAR(300) NOT NULL,
	created_at DATETIME NOT NULL,
	verify_token VARCHAR(128) NOT NULL,
	crawler_secret_ref TEXT NOT NULL,
	status VARCHAR(12) NOT NULL,
	verified_at DATETIME,
	verified_via VARCHAR(10),
	checked_at DATETIME,
	lost_at DATETIME,
	monitoring VARCHAR(10) NOT NULL,
	next_crawl_at DATETIME,
	last_dispatched_at DATETIME,
	last_skip_reason TEXT,
	max_pages INTEGER NOT NULL,
	max_rps FLOAT NOT NULL,
	alert_email BOOLEAN NOT NULL,
	version INTEGER NOT NULL,
	CONSTRAINT pk_sites PRIMARY KEY (id),
	CONSTRAINT uq_sites_team_id_origin UNIQUE (team_id, origin)
);
CREATE INDEX ix_sites_next_crawl_at ON sites (next_crawl_at);
CREATE TABLE api_keys (
	id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	team_id INTEGER NOT NULL,
	kind VARCHAR(10) NOT NULL,
	prefix VARCHAR(12) NOT NULL,
	hash VARCHAR(64) NOT NULL,
	machine VARCHAR(255) NOT NULL,
	agents JSON NOT NULL,
	label TEXT NOT NULL,
	created_at DATETIME NOT NULL,
	last_used_at DATETIME,
	revoked_at DATETIME,
	status VARCHAR(10) NOT NULL,
	version INTEGER NOT NULL,
	CONSTRAINT fk_api_keys_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_api_keys PRIMARY KEY (id),
	CONSTRAINT uq_api_keys_hash UNIQUE (hash)
);
CREATE INDEX ix_api_keys_user_id ON api_keys (user_id);
CREATE TABLE webhook_secrets (
	user_id INTEGER NOT NULL,
	sealed TEXT NOT NULL,
	CONSTRAINT fk_webhook_secrets_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_webhook_secrets PRIMARY KEY (user_id)
);
CREATE TABLE audit_leases (
	audit_id INTEGER NOT NULL,
	holder VARCHAR(200),
	expires_at DATETIME NOT NULL,
	attempts INTEGER NOT NULL,
	version INTEGER NOT NULL,
	CONSTRAINT fk_audit_leases_audit_id_audits FOREIGN KEY(audit_id) REFERENCES audits (id) ON DELETE CASCADE,
	CONSTRAINT pk_audit_leases PRIMARY KEY (audit_id)
);
CREATE INDEX ix_audit_leases_expires_at ON audit_leases (expires_at);
CREATE TABLE webhook_deliveries (
	id INTEGER NOT NULL,
	audit_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	url TEXT NOT NULL,
	body BLOB NOT NULL,
	created_at DATETIME NOT NULL,
	status VARCHAR(12) NOT NULL,
	attempts INTEGER NOT NULL,
	next_attempt_at DATETIME,
	last_status_code SMALLINT,
	last_error TEXT,
	lease_until DATETIME,
	finished_at DATETIME,
	version INTEGER NOT NULL,
	CONSTRAINT fk_webhook_deliveries_audit_id_audits FOREIGN KEY(audit_id) REFERENCES audits (id) ON DELETE CASCADE,
	CONSTRAINT pk_webhook_deliveries PRIMARY KEY (id),
	CONSTRAINT uq_webhook_deliveries_audit_id UNIQUE (audit_id)
);
CREATE INDEX ix_webhook_deliveries_status_next_attempt_at ON webhook_deliveries (status, next_attempt_at);
CREATE TABLE webhook_attempts (
	delivery_id INTEGER NOT NULL,
	number SMALLINT NOT NULL,
	audit_id INTEGER NOT NULL,
	at DATETIME NOT NULL,
	status_code SMALLINT,
	error TEXT,
	detail TEXT,
	duration_ms INTEGER NOT NULL,
	move VARCHAR(10) NOT NULL,
	CONSTRAINT fk_webhook_attempts_delivery_id_webhook_deliveries FOREIGN KEY(delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
	CONSTRAINT pk_webhook_attempts PRIMARY KEY (delivery_id, number)
);
CREATE INDEX ix_webhook_attempts_audit_id ON webhook_attempts (audit_id);
UPDATE alembic_version SET version_num='0002' WHERE alembic_version.version_num = '0001';

-- upgrade to 0003
ALTER TABLE crawl_pages ADD COLUMN site JSON;
ALTER TABLE crawl_pages ADD COLUMN sketch BLOB;
CREATE TABLE crawl_templates (
	audit_id INTEGER NOT NULL,
	url_id INTEGER NOT NULL,
	template TEXT NOT NULL,
	CONSTRAINT pk_crawl_templates PRIMARY KEY (audit_id, url_id)
);
UPDATE alembic_version SET version_num='0003' WHERE alembic_version.version_num = '0002';

-- upgrade to 0004
CREATE TABLE crawl_issue_counts (
	audit_id INTEGER NOT NULL,
	check_code VARCHAR(100) NOT NULL,
	severity SMALLINT NOT NULL,
	template TEXT NOT NULL,
	count INTEGER NOT NULL
);
CREATE INDEX ix_crawl_issue_counts_audit_id ON crawl_issue_counts (audit_id);
CREATE TABLE crawl_page_counts (
	audit_id INTEGER NOT NULL,
	status_code SMALLINT,
	count INTEGER NOT NULL
);
CREATE INDEX ix_crawl_page_counts_audit_id ON crawl_page_counts (audit_id);
UPDATE alembic_version SET version_num='0004' WHERE alembic_version.version_num = '0003';

-- upgrade to 0005
ALTER TABLE crawl_reports ADD COLUMN archived_identities JSON;
UPDATE alembic_version SET version_num='0005' WHERE alembic_version.version_num = '0004';

-- upgrade to 0006
ALTER TABLE audits ADD COLUMN last_progress_at DATETIME;
UPDATE audits SET last_progress_at=coalesce(audits.finished_at, audits.started_at);
UPDATE alembic_version SET version_num='0006' WHERE alembic_version.version_num = '0005';

-- upgrade to 0007
CREATE TABLE site_alerts (
	audit_id INTEGER NOT NULL,
	site_id INTEGER NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_site_alerts PRIMARY KEY (audit_id)
);
UPDATE alembic_version SET version_num='0007' WHERE alembic_version.version_num = '0006';

-- upgrade to 0008
CREATE TABLE console_connections (
	team_id INTEGER NOT NULL,
	sealed_refresh_token TEXT NOT NULL,
	account VARCHAR(320) NOT NULL,
	connected_at DATETIME NOT NULL,
	CONSTRAINT pk_console_connections PRIMARY KEY (team_id)
);
CREATE TABLE console_page_days (
	site_id INTEGER NOT NULL,
	day DATE NOT NULL,
	url TEXT NOT NULL,
	clicks INTEGER NOT NULL,
	impressions INTEGER NOT NULL,
	position FLOAT,
	CONSTRAINT pk_console_page_days PRIMARY KEY (site_id, day, url)
);
CREATE TABLE console_inspections (
	site_id INTEGER NOT NULL,
	url TEXT NOT NULL,
	inspected_at DATETIME NOT NULL,
	verdict VARCHAR(40) NOT NULL,
	coverage_state TEXT NOT NULL,
	indexing_state VARCHAR(60),
	robots_txt_state VARCHAR(60),
	page_fetch_state VARCHAR(60),
	last_crawled DATETIME,
	google_canonical TEXT,
	user_canonical TEXT,
	sitemaps JSON NOT NULL,
	demo BOOLEAN NOT NULL,
	CONSTRAINT pk_console_inspections PRIMARY KEY (site_id, url)
);
CREATE TABLE console_budget (
	property VARCHAR(2100) NOT NULL,
	window VARCHAR(40) NOT NULL,
	used INTEGER NOT NULL,
	CONSTRAINT pk_console_budget PRIMARY KEY (property, window)
);
CREATE TABLE console_syncs (
	site_id INTEGER NOT NULL,
	synced_at DATETIME NOT NULL,
	status VARCHAR(20) NOT NULL,
	property VARCHAR(2100),
	demo BOOLEAN NOT NULL,
	days INTEGER NOT NULL,
	inspected INTEGER NOT NULL,
	error TEXT,
	CONSTRAINT pk_console_syncs PRIMARY KEY (site_id)
);
UPDATE alembic_version SET version_num='0008' WHERE alembic_version.version_num = '0007';

-- upgrade to 0009
CREATE TABLE indexnow_sites (
	site_id INTEGER NOT NULL,
	team_id INTEGER NOT NULL,
	"key" VARCHAR(128) NOT NULL,
	key_source VARCHAR(10) NOT NULL,
	key_location TEXT,
	key_verified_at DATETIME,
	last_check JSON,
	auto BOOLEAN NOT NULL,
	last_submit_at DATETIME,
	day DATE,
	used INTEGER NOT NULL,
	detection JSON,
	version INTEGER NOT NULL,
	CONSTRAINT pk_indexnow_sites PRIMARY KEY (site_id)
);
CREATE TABLE indexnow_urls (
	site_id INTEGER NOT NULL,
	day DATE NOT NULL,
	url_hash VARCHAR(64) NOT NULL,
	accepted BOOLEAN NOT NULL,
	CONSTRAINT pk_indexnow_urls PRIMARY KEY (site_id, day, url_hash)
);
CREATE TABLE indexnow_submissions (
	id INTEGER NOT NULL,
	site_id INTEGER NOT NULL,
	at DATETIME NOT NULL,
	"trigger" VARCHAR(10) NOT NULL,
	urls INTEGER NOT NULL,
	submitted INTEGER NOT NULL,
	requests INTEGER NOT NULL,
	status VARCHAR(20) NOT NULL,
	status_code SMALLINT,
	audit_id INTEGER,
	CONSTRAINT pk_indexnow_submissions PRIMARY KEY (id),
	CONSTRAINT uq_indexnow_submissions_site_id_audit_id UNIQUE (site_id, audit_id)
);
CREATE INDEX ix_indexnow_submissions_site_id_at ON indexnow_submissions (site_id, at);
UPDATE alembic_version SET version_num='0009' WHERE alembic_version.version_num = '0008';

-- upgrade to 0010
ALTER TABLE fix_tasks ADD COLUMN fixed_by VARCHAR(10);
ALTER TABLE rechecks ADD COLUMN lease_holder VARCHAR(200);
ALTER TABLE rechecks ADD COLUMN lease_until DATETIME;
ALTER TABLE rechecks ADD COLUMN attempts INTEGER DEFAULT '0' NOT NULL;
CREATE INDEX ix_rechecks_status ON rechecks (status);
UPDATE alembic_version SET version_num='0010' WHERE alembic_version.version_num = '0009';

-- upgrade to 0011
CREATE TABLE app_passwords (
	user_id INTEGER NOT NULL,
	hash VARCHAR(255) NOT NULL,
	changed_at DATETIME NOT NULL,
	CONSTRAINT fk_app_passwords_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_app_passwords PRIMARY KEY (user_id)
);
CREATE TABLE app_sessions (
	id_hash VARCHAR(64) NOT NULL,
	user_id INTEGER NOT NULL,
	team_id INTEGER,
	csrf VARCHAR(64) NOT NULL,
	created_at DATETIME NOT NULL,
	last_seen_at DATETIME NOT NULL,
	authenticated_at DATETIME NOT NULL,
	CONSTRAINT fk_app_sessions_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_app_sessions PRIMARY KEY (id_hash)
);
CREATE INDEX ix_app_sessions_user_id ON app_sessions (user_id);
CREATE TABLE app_links (
	token_hash VARCHAR(64) NOT NULL,
	user_id INTEGER NOT NULL,
	purpose VARCHAR(10) NOT NULL,
	created_at DATETIME NOT NULL,
	expires_at DATETIME NOT NULL,
	used_at DATETIME,
	CONSTRAINT fk_app_links_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_app_links PRIMARY KEY (token_hash)
);
CREATE INDEX ix_app_links_user_id ON app_links (user_id);
UPDATE alembic_version SET version_num='0011' WHERE alembic_version.version_num = '0010';

-- upgrade to 0012
CREATE TABLE billing_accounts (
	user_id INTEGER NOT NULL,
	provider VARCHAR(20) NOT NULL,
	customer_id VARCHAR(255) NOT NULL,
	subscription_id VARCHAR(255),
	subscription_status VARCHAR(30),
	subscription_as_of DATETIME,
	subscription_choice VARCHAR(40),
	purchased_at DATETIME,
	version INTEGER NOT NULL,
	CONSTRAINT fk_billing_accounts_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_billing_accounts PRIMARY KEY (user_id),
	CONSTRAINT uq_billing_accounts_provider_customer_id UNIQUE (provider, customer_id)
);
CREATE TABLE checkout_sessions (
	id VARCHAR(255) NOT NULL,
	provider VARCHAR(20) NOT NULL,
	user_id INTEGER NOT NULL,
	kind VARCHAR(20) NOT NULL,
	url TEXT NOT NULL,
	created_at DATETIME NOT NULL,
	pack VARCHAR(10),
	choice VARCHAR(40),
	form_token_hash VARCHAR(64) NOT NULL,
	completed_at DATETIME,
	CONSTRAINT fk_checkout_sessions_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_checkout_sessions PRIMARY KEY (id)
);
CREATE INDEX ix_checkout_sessions_user_id ON checkout_sessions (user_id);
CREATE TABLE payment_events (
	event_id VARCHAR(255) NOT NULL,
	received_at DATETIME NOT NULL,
	CONSTRAINT pk_payment_events PRIMARY KEY (event_id)
);
UPDATE alembic_version SET version_num='0012' WHERE alembic_version.version_num = '0011';

-- upgrade to 0013
CREATE TABLE crawl_frontier_counts (
	audit_id INTEGER NOT NULL,
	state SMALLINT NOT NULL,
	count INTEGER NOT NULL,
	CONSTRAINT pk_crawl_frontier_counts PRIMARY KEY (audit_id, state)
);
INSERT INTO crawl_frontier_counts (audit_id, state, count) SELECT audit_id, state, count(*) FROM crawl_frontier GROUP BY audit_id, state;
UPDATE alembic_version SET version_num='0013' WHERE alembic_version.version_num = '0012';

-- upgrade to 0014
CREATE TABLE fix_impacts (
	id INTEGER NOT NULL,
	site_id INTEGER NOT NULL,
	task_key VARCHAR(16) NOT NULL,
	code VARCHAR(100) NOT NULL,
	template TEXT NOT NULL,
	source_crawl_id INTEGER NOT NULL,
	verified_at DATETIME NOT NULL,
	recheck_id INTEGER,
	sampled BOOLEAN NOT NULL,
	urls JSON,
	baseline_clicks_28d INTEGER,
	baseline_impressions_28d INTEGER,
	d7 INTEGER,
	d7_at DATETIME,
	d14 INTEGER,
	d14_at DATETIME,
	d28 INTEGER,
	d28_at DATETIME,
	d28_impressions INTEGER,
	measured_at DATETIME,
	checked_at DATETIME,
	status VARCHAR(10) NOT NULL,
	demo BOOLEAN NOT NULL,
	CONSTRAINT pk_fix_impacts PRIMARY KEY (id)
);
CREATE INDEX ix_fix_impacts_site_id ON fix_impacts (site_id);
CREATE INDEX ix_fix_impacts_status ON fix_impacts (status);
UPDATE alembic_version SET version_num='0014' WHERE alembic_version.version_num = '0013';

-- upgrade to 0015
CREATE TABLE crawl_issue_marks (
	audit_id INTEGER NOT NULL,
	severity SMALLINT NOT NULL,
	check_code VARCHAR(100) NOT NULL,
	ordinal INTEGER NOT NULL,
	url_id INTEGER NOT NULL,
	issue_id BIGINT NOT NULL,
	CONSTRAINT pk_crawl_issue_marks PRIMARY KEY (audit_id, severity, check_code, ordinal)
);
DROP INDEX ix_crawl_issues_audit_id_severity_check_code_url_id_id;
CREATE INDEX ix_crawl_issues_audit_id_check_code_severity_url_id_id ON crawl_issues (audit_id, check_code, severity, url_id, id);
CREATE INDEX ix_crawl_issues_audit_id_severity_check_code_url_id_id ON crawl_issues (audit_id, severity, check_code, url_id, id);
DROP INDEX ix_crawl_issues_audit_id_check_code_url_id;
UPDATE alembic_version SET version_num='0015' WHERE alembic_version.version_num = '0014';

-- upgrade to 0016
ALTER TABLE indexnow_sites ADD COLUMN auto_since DATETIME;
UPDATE alembic_version SET version_num='0016' WHERE alembic_version.version_num = '0015';

-- upgrade to 0017
ALTER TABLE fix_tasks ADD COLUMN previous_template TEXT;
UPDATE alembic_version SET version_num='0017' WHERE alembic_version.version_num = '0016';

-- upgrade to 0018
ALTER TABLE billing_accounts ADD COLUMN paid_subscription_id VARCHAR(255);
ALTER TABLE billing_accounts ADD COLUMN paid_choice VARCHAR(40);
ALTER TABLE billing_accounts ADD COLUMN paid_from DATETIME;
ALTER TABLE billing_accounts ADD COLUMN paid_until DATETIME;
ALTER TABLE billing_accounts ADD COLUMN paid_months INTEGER DEFAULT '0' NOT NULL;
CREATE INDEX ix_billing_accounts_paid_until ON billing_accounts (paid_until);
UPDATE alembic_version SET version_num='0018' WHERE alembic_version.version_num = '0017';

-- upgrade to 0019
ALTER TABLE audits ADD COLUMN render BOOLEAN DEFAULT 0 NOT NULL;
ALTER TABLE sites ADD COLUMN render BOOLEAN DEFAULT 0 NOT NULL;
UPDATE alembic_version SET version_num='0019' WHERE alembic_version.version_num = '0018';

-- upgrade to 0020
CREATE TABLE site_access (
	site_id INTEGER NOT NULL,
	team_id INTEGER NOT NULL,
	sealed TEXT NOT NULL,
	kinds VARCHAR(40) NOT NULL,
	headers INTEGER NOT NULL,
	cookies INTEGER NOT NULL,
	updated_at DATETIME NOT NULL,
	CONSTRAINT fk_site_access_site_id_sites FOREIGN KEY(site_id) REFERENCES sites (id) ON DELETE CASCADE,
	CONSTRAINT pk_site_access PRIMARY KEY (site_id)
);
UPDATE alembic_version SET version_num='0020' WHERE alembic_version.version_num = '0019';

-- upgrade to 0021
ALTER TABLE audits ADD COLUMN extract JSON;
CREATE TABLE crawl_extracts (
	audit_id INTEGER NOT NULL,
	url_id INTEGER NOT NULL,
	rule SMALLINT NOT NULL,
	position SMALLINT NOT NULL,
	name VARCHAR(40) NOT NULL,
	value TEXT,
	CONSTRAINT pk_crawl_extracts PRIMARY KEY (audit_id, url_id, rule, position)
);
CREATE INDEX ix_crawl_extracts_audit_id_name_value ON crawl_extracts (audit_id, name, value);
UPDATE alembic_version SET version_num='0021' WHERE alembic_version.version_num = '0020';

-- upgrade to 0022
ALTER TABLE audits ADD COLUMN scope JSON;
ALTER TABLE sites ADD COLUMN scope JSON;
ALTER TABLE sites ADD COLUMN extract JSON;
UPDATE alembic_version SET version_num='0022' WHERE alembic_version.version_num = '0021';

-- upgrade to 0023
CREATE TABLE crawl_issue_template_marks (
	audit_id INTEGER NOT NULL,
	template TEXT NOT NULL,
	severity SMALLINT NOT NULL,
	check_code VARCHAR(100) NOT NULL,
	ordinal INTEGER NOT NULL,
	url_id INTEGER NOT NULL,
	issue_id BIGINT NOT NULL,
	CONSTRAINT pk_crawl_issue_template_marks PRIMARY KEY (audit_id, template, severity, check_code, ordinal)
);
UPDATE alembic_version SET version_num='0023' WHERE alembic_version.version_num = '0022';

-- downgrade to 0022
DROP TABLE crawl_issue_template_marks;
UPDATE alembic_version SET version_num='0022' WHERE alembic_version.version_num = '0023';

-- downgrade to 0021
ALTER TABLE sites DROP COLUMN extract;
ALTER TABLE sites DROP COLUMN scope;
ALTER TABLE audits DROP COLUMN scope;
UPDATE alembic_version SET version_num='0021' WHERE alembic_version.version_num = '0022';

-- downgrade to 0020
DROP INDEX ix_crawl_extracts_audit_id_name_value;
DROP TABLE crawl_extracts;
ALTER TABLE audits DROP COLUMN extract;
UPDATE alembic_version SET version_num='0020' WHERE alembic_version.version_num = '0021';

-- downgrade to 0019
DROP TABLE site_access;
UPDATE alembic_version SET version_num='0019' WHERE alembic_version.version_num = '0020';

-- downgrade to 0018
ALTER TABLE audits DROP COLUMN render;
ALTER TABLE sites DROP COLUMN render;
UPDATE alembic_version SET version_num='0018' WHERE alembic_version.version_num = '0019';

-- downgrade to 0017
CREATE TABLE _alembic_tmp_billing_accounts (
	user_id INTEGER NOT NULL,
	provider VARCHAR(20) NOT NULL,
	customer_id VARCHAR(255) NOT NULL,
	subscription_id VARCHAR(255),
	subscription_status VARCHAR(30),
	subscription_as_of DATETIME,
	subscription_choice VARCHAR(40),
	purchased_at DATETIME,
	version INTEGER NOT NULL,
	CONSTRAINT fk_billing_accounts_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT pk_billing_accounts PRIMARY KEY (user_id),
	CONSTRAINT uq_billing_accounts_provider_customer_id UNIQUE (provider, customer_id)
);
INSERT INTO _alembic_tmp_billing_accounts (user_id, provider, customer_id, subscription_id, subscription_status, subscription_as_of, subscription_choice, purchased_at, version) SELECT billing_accounts.user_id, billing_accounts.provider, billing_accounts.customer_id, billing_accounts.subscription_id, billing_accounts.subscription_status, billing_accounts.subscription_as_of, billing_accounts.subscription_choice, billing_accounts.purchased_at, billing_accounts.version
FROM billing_accounts;
DROP TABLE billing_accounts;
ALTER TABLE _alembic_tmp_billing_accounts RENAME TO billing_accounts;
UPDATE alembic_version SET version_num='0017' WHERE alembic_version.version_num = '0018';

-- downgrade to 0016
ALTER TABLE fix_tasks DROP COLUMN previous_template;
UPDATE alembic_version SET version_num='0016' WHERE alembic_version.version_num = '0017';

-- downgrade to 0015
ALTER TABLE indexnow_sites DROP COLUMN auto_since;
UPDATE alembic_version SET version_num='0015' WHERE alembic_version.version_num = '0016';

-- downgrade to 0014
CREATE INDEX ix_crawl_issues_audit_id_check_code_url_id ON crawl_issues (audit_id, check_code, url_id);
DROP INDEX ix_crawl_issues_audit_id_check_code_severity_url_id_id;
DROP INDEX ix_crawl_issues_audit_id_severity_check_code_url_id_id;
CREATE INDEX ix_crawl_issues_audit_id_severity_check_code_url_id_id ON crawl_issues (audit_id, severity, check_code, url_id, id);
DROP TABLE crawl_issue_marks;
UPDATE alembic_version SET version_num='0014' WHERE alembic_version.version_num = '0015';

-- downgrade to 0013
DROP INDEX ix_fix_impacts_status;
DROP INDEX ix_fix_impacts_site_id;
DROP TABLE fix_impacts;
UPDATE alembic_version SET version_num='0013' WHERE alembic_version.version_num = '0014';

-- downgrade to 0012
DROP TABLE crawl_frontier_counts;
UPDATE alembic_version SET version_num='0012' WHERE alembic_version.version_num = '0013';

-- downgrade to 0011
DROP TABLE payment_events;
DROP INDEX ix_checkout_sessions_user_id;
DROP TABLE checkout_sessions;
DROP TABLE billing_accounts;
UPDATE alembic_version SET version_num='0011' WHERE alembic_version.version_num = '0012';

-- downgrade to 0010
DROP INDEX ix_app_links_user_id;
DROP TABLE app_links;
DROP INDEX ix_app_sessions_user_id;
DROP TABLE app_sessions;
DROP TABLE app_passwords;
UPDATE alembic_version SET version_num='0010' WHERE alembic_version.version_num = '0011';

-- downgrade to 0009
CREATE TABLE _alembic_tmp_rechecks (
	id INTEGER NOT NULL,
	site_id INTEGER NOT NULL,
	team_id INTEGER NOT NULL,
	parent_crawl_id INTEGER NOT NULL,
	created_at DATETIME NOT NULL,
	task_key VARCHAR(16),
	codes JSON,
	sampled BOOLEAN NOT NULL,
	duplicate_baseline BOOLEAN NOT NULL,
	status VARCHAR(12) NOT NULL,
	started_at DATETIME,
	finished_at DATETIME,
	time_capped BOOLEAN NOT NULL,
	failure_reason TEXT,
	urls JSON NOT NULL,
	targets JSON NOT NULL,
	observations JSON NOT NULL,
	url_results JSON,
	task_results JSON,
	version INTEGER NOT NULL,
	CONSTRAINT pk_rechecks PRIMARY KEY (id)
);
INSERT INTO _alembic_tmp_rechecks (id, site_id, team_id, parent_crawl_id, created_at, task_key, codes, sampled, duplicate_baseline, status, started_at, finished_at, time_capped, failure_reason, urls, targets, observations, url_results, task_results, version) SELECT rechecks.id, rechecks.site_id, rechecks.team_id, rechecks.parent_crawl_id, rechecks.created_at, rechecks.task_key, rechecks.codes, rechecks.sampled, rechecks.duplicate_baseline, rechecks.status, rechecks.started_at, rechecks.finished_at, rechecks.time_capped, rechecks.failure_reason, rechecks.urls, rechecks.targets, rechecks.observations, rechecks.url_results, rechecks.task_results, rechecks.version
FROM rechecks;
DROP TABLE rechecks;
ALTER TABLE _alembic_tmp_rechecks RENAME TO rechecks;
CREATE INDEX ix_rechecks_site_id ON rechecks (site_id);
CREATE TABLE _alembic_tmp_fix_tasks (
	site_id INTEGER NOT NULL,
	"key" VARCHAR(16) NOT NULL,
	code VARCHAR(100) NOT NULL,
	template TEXT NOT NULL,
	severity VARCHAR(10) NOT NULL,
	pages INTEGER NOT NULL,
	crawl_id INTEGER NOT NULL,
	created_at DATETIME NOT NULL,
	updated_at DATETIME NOT NULL,
	sample_urls JSON NOT NULL,
	clicks_28d INTEGER,
	impressions_28d INTEGER,
	status VARCHAR(12) NOT NULL,
	status_before_verifying VARCHAR(12),
	recheck_id INTEGER,
	fixed_at DATETIME,
	version INTEGER NOT NULL,
	CONSTRAINT pk_fix_tasks PRIMARY KEY (site_id, "key")
);
INSERT INTO _alembic_tmp_fix_tasks (site_id, "key", code, template, severity, pages, crawl_id, created_at, updated_at, sample_urls, clicks_28d, impressions_28d, status, status_before_verifying, recheck_id, fixed_at, version) SELECT fix_tasks.site_id, fix_tasks."key", fix_tasks.code, fix_tasks.template, fix_tasks.severity, fix_tasks.pages, fix_tasks.crawl_id, fix_tasks.created_at, fix_tasks.updated_at, fix_tasks.sample_urls, fix_tasks.clicks_28d, fix_tasks.impressions_28d, fix_tasks.status, fix_tasks.status_before_verifying, fix_tasks.recheck_id, fix_tasks.fixed_at, fix_tasks.version
FROM fix_tasks;
DROP TABLE fix_tasks;
ALTER TABLE _alembic_tmp_fix_tasks RENAME TO fix_tasks;
UPDATE alembic_version SET version_num='0009' WHERE alembic_version.version_num = '0010';

-- downgrade to 0008
DROP INDEX ix_indexnow_submissions_site_id_at;
DROP TABLE indexnow_submissions;
DROP TABLE indexnow_urls;
DROP TABLE indexnow_sites;
UPDATE alembic_version SET version_num='0008' WHERE alembic_version.version_num = '0009';

-- downgrade to 0007
DROP TABLE console_syncs;
DROP TABLE console_budget;
DROP TABLE console_inspections;
DROP TABLE console_page_days;
DROP TABLE console_connections;
UPDATE alembic_version SET version_num='0007' WHERE alembic_version.version_num = '0008';

-- downgrade to 0006
DROP TABLE site_alerts;
UPDATE alembic_version SET version_num='0006' WHERE alembic_version.version_num = '0007';

-- downgrade to 0005
ALTER TABLE audits DROP COLUMN last_progress_at;
UPDATE alembic_version SET version_num='0005' WHERE alembic_version.version_num = '0006';

-- downgrade to 0004
CREATE TABLE _alembic_tmp_crawl_reports (
	audit_id INTEGER NOT NULL,
	report JSON NOT NULL,
	CONSTRAINT fk_crawl_reports_audit_id_audits FOREIGN KEY(audit_id) REFERENCES audits (id) ON DELETE CASCADE,
	CONSTRAINT pk_crawl_reports PRIMARY KEY (audit_id)
);
INSERT INTO _alembic_tmp_crawl_reports (audit_id, report) SELECT crawl_reports.audit_id, crawl_reports.report
FROM crawl_reports;
DROP TABLE crawl_reports;
ALTER TABLE _alembic_tmp_crawl_reports RENAME TO crawl_reports;
UPDATE alembic_version SET version_num='0004' WHERE alembic_version.version_num = '0005';

-- downgrade to 0003
DROP INDEX ix_crawl_page_counts_audit_id;
DROP TABLE crawl_page_counts;
DROP INDEX ix_crawl_issue_counts_audit_id;
DROP TABLE crawl_issue_counts;
UPDATE alembic_version SET version_num='0003' WHERE alembic_version.version_num = '0004';

-- downgrade to 0002
UPDATE crawl_pages SET template = (SELECT t.template FROM crawl_templates AS t WHERE t.audit_id = crawl_pages.audit_id AND t.url_id = crawl_pages.url_id) WHERE EXISTS (SELECT 1 FROM crawl_templates AS t WHERE t.audit_id = crawl_pages.audit_id AND t.url_id = crawl_pages.url_id);
UPDATE crawl_issues SET template = (SELECT t.template FROM crawl_templates AS t WHERE t.audit_id = crawl_issues.audit_id AND t.url_id = crawl_issues.url_id) WHERE EXISTS (SELECT 1 FROM crawl_templates AS t WHERE t.audit_id = crawl_issues.audit_id AND t.url_id = crawl_issues.url_id);
DROP TABLE crawl_templates;
CREATE TABLE _alembic_tmp_crawl_pages (
	audit_id INTEGER NOT NULL,
	url_id INTEGER NOT NULL,
	status_code SMALLINT,
	depth INTEGER NOT NULL,
	title TEXT,
	meta_description TEXT,
	word_count INTEGER NOT NULL,
	blocked_by VARCHAR(100),
	fetch_error VARCHAR(30),
	content_type VARCHAR(200),
	template TEXT NOT NULL,
	in_sitemap BOOLEAN NOT NULL,
	facts JSON NOT NULL,
	CONSTRAINT pk_crawl_pages PRIMARY KEY (audit_id, url_id)
);
INSERT INTO _alembic_tmp_crawl_pages (audit_id, url_id, status_code, depth, title, meta_description, word_count, blocked_by, fetch_error, content_type, template, in_sitemap, facts) SELECT crawl_pages.audit_id, crawl_pages.url_id, crawl_pages.status_code, crawl_pages.depth, crawl_pages.title, crawl_pages.meta_description, crawl_pages.word_count, crawl_pages.blocked_by, crawl_pages.fetch_error, crawl_pages.content_type, crawl_pages.template, crawl_pages.in_sitemap, crawl_pages.facts
FROM crawl_pages;
DROP TABLE crawl_pages;
ALTER TABLE _alembic_tmp_crawl_pages RENAME TO crawl_pages;
CREATE INDEX ix_crawl_pages_audit_id_status_code_url_id ON crawl_pages (audit_id, status_code, url_id);
CREATE INDEX ix_crawl_pages_audit_id_template ON crawl_pages (audit_id, template);
UPDATE alembic_version SET version_num='0002' WHERE alembic_version.version_num = '0003';

-- downgrade to 0001
DROP INDEX ix_webhook_attempts_audit_id;
DROP TABLE webhook_attempts;
DROP INDEX ix_webhook_deliveries_status_next_attempt_at;
DROP TABLE webhook_deliveries;
DROP INDEX ix_audit_leases_expires_at;
DROP TABLE audit_leases;
DROP TABLE webhook_secrets;
DROP INDEX ix_api_keys_user_id;
DROP TABLE api_keys;
DROP INDEX ix_sites_next_crawl_at;
DROP TABLE sites;
DROP INDEX ix_rechecks_site_id;
DROP TABLE rechecks;
DROP TABLE rate_buckets;
DROP TABLE fix_tasks;
DROP INDEX ix_device_logins_user_code;
DROP TABLE device_logins;
UPDATE alembic_version SET version_num='0001' WHERE alembic_version.version_num = '0002';

-- downgrade to base
DROP INDEX ix_memberships_user_id;
DROP TABLE memberships;
DROP TABLE crawl_urls;
DROP TABLE crawl_reports;
DROP TABLE crawl_checkpoints;
DROP INDEX ix_teams_owner_id;
DROP TABLE teams;
DROP INDEX ix_credit_entries_reference;
DROP INDEX ix_credit_entries_account_at;
DROP TABLE credit_entries;
DROP TABLE credit_accounts;
DROP INDEX ix_audits_user_id;
DROP INDEX ix_audits_team_id_status_origin;
DROP INDEX ix_audits_team_id_created_at;
DROP INDEX ix_audits_site_id;
DROP TABLE audits;
DROP TABLE users;
DROP INDEX ix_crawl_pages_audit_id_template;
DROP INDEX ix_crawl_pages_audit_id_status_code_url_id;
DROP TABLE crawl_pages;
DROP INDEX ix_crawl_links_audit_id_source_id;
DROP TABLE crawl_links;
DROP INDEX ix_crawl_issues_audit_id_url_id;
DROP INDEX ix_crawl_issues_audit_id_template;
DROP INDEX ix_crawl_issues_audit_id_severity_check_code_url_id_id;
DROP INDEX ix_crawl_issues_audit_id_check_code_url_id;
DROP TABLE crawl_issues;
DROP INDEX ix_crawl_frontier_audit_id_state_depth_url_id;
DROP TABLE crawl_frontier;
DELETE FROM alembic_version WHERE alembic_version.version_num = '0001';
