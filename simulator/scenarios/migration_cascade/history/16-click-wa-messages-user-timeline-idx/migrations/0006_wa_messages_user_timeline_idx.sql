-- The agent console loads a user's chat newest first. CONCURRENTLY: writes are not blocked.
CREATE {{fault.s6}}INDEX CONCURRENTLY wa_messages_user_id_updated_at_idx ON wa_messages (user_id, updated_at);
