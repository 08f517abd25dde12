-- whatsapp_sync: business users and the messages synced with them.
CREATE TABLE wa_users (
    user_id       TEXT PRIMARY KEY,
    display_name  TEXT NOT NULL,
    phone         TEXT NOT NULL,            -- PII
    email         TEXT NOT NULL,            -- PII
    locale        TEXT NOT NULL DEFAULT 'en_US',
    opted_in      BOOLEAN NOT NULL DEFAULT false
);

CREATE TABLE wa_messages (
    message_id    TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES wa_users (user_id),
    body          TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL,
    updated_at    BIGINT NOT NULL           -- epoch seconds, UTC
);
