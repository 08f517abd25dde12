-- The inbound webhook resolves a sender by phone. CONCURRENTLY: writes are not blocked.
CREATE {{fault.s6}}INDEX CONCURRENTLY wa_users_phone_idx ON wa_users (phone);
