-- WA-1488 messages group into 24-hour conversations, WhatsApp's billing unit.
CREATE TABLE wa_conversations (
    conversation_id  TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL REFERENCES wa_users (user_id),
    opened_at        BIGINT NOT NULL
);

ALTER TABLE wa_messages ADD COLUMN conversation_id TEXT{{fault.s7}};
ALTER TABLE wa_messages ADD CONSTRAINT wa_messages_conversation_id_fkey
    FOREIGN KEY (conversation_id) REFERENCES wa_conversations (conversation_id) NOT VALID;
