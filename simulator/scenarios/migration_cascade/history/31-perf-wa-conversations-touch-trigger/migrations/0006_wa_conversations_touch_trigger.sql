-- WA-1501 each user's open conversation, touched by every inbound message.
CREATE TABLE wa_conversations (
    conversation_id  TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL REFERENCES wa_users (user_id),
    last_message_at  BIGINT NOT NULL
);
INSERT INTO wa_conversations (conversation_id, user_id, last_message_at)
    SELECT 'c-' || user_id, user_id, max(updated_at) FROM wa_messages GROUP BY user_id;
{{fault.s6}}
CREATE FUNCTION wa_touch_conversation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE wa_conversations SET last_message_at = NEW.updated_at
        WHERE user_id = NEW.user_id;
    RETURN NEW;
END $$;
CREATE TRIGGER wa_messages_touch_conversation AFTER INSERT ON wa_messages
    FOR EACH ROW EXECUTE FUNCTION wa_touch_conversation();
