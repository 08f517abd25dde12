-- WA-1420 conversions API for business messaging: conversion -> WhatsApp user, user ->
-- acquiring click, click -> first conversion.
ALTER TABLE conversion_events ADD COLUMN wa_user_id TEXT{{fault.s6}};
ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_wa_user_id_fkey
    FOREIGN KEY (wa_user_id) REFERENCES wa_users (user_id) NOT VALID;

ALTER TABLE wa_users ADD COLUMN first_click_id TEXT{{fault.s6}};
ALTER TABLE wa_users ADD CONSTRAINT wa_users_first_click_id_fkey
    FOREIGN KEY (first_click_id) REFERENCES ad_clicks (click_id) NOT VALID;

ALTER TABLE ad_clicks ADD COLUMN first_conversion_id TEXT{{fault.s6}};
ALTER TABLE ad_clicks ADD CONSTRAINT ad_clicks_first_conversion_id_fkey
    FOREIGN KEY (first_conversion_id) REFERENCES conversion_events (event_id) NOT VALID;
