-- whatsapp_sync: the delivery dashboard filters on status and recency.
CREATE INDEX wa_messages_status_updated_at_idx ON wa_messages (status, updated_at);
