-- user-service schema, database "users" on postgres-db.
CREATE TABLE users (
    user_id      text PRIMARY KEY,
    email        text NOT NULL UNIQUE,
    display_name text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now()
);
