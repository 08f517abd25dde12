-- ADS-2318 click-to-WhatsApp attribution: chat -> ad, conversion -> chat, ad -> latest
-- conversion.
ALTER TABLE wa_messages ADD COLUMN source_ad_id TEXT{{fault.s5}};
ALTER TABLE wa_messages ADD CONSTRAINT wa_messages_source_ad_id_fkey
    FOREIGN KEY (source_ad_id) REFERENCES ads (ad_id) NOT VALID;

ALTER TABLE conversion_events ADD COLUMN wa_message_id TEXT{{fault.s5}};
ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_wa_message_id_fkey
    FOREIGN KEY (wa_message_id) REFERENCES wa_messages (message_id) NOT VALID;

ALTER TABLE ads ADD COLUMN last_conversion_id TEXT{{fault.s5}};
ALTER TABLE ads ADD CONSTRAINT ads_last_conversion_id_fkey
    FOREIGN KEY (last_conversion_id) REFERENCES conversion_events (event_id) NOT VALID;
