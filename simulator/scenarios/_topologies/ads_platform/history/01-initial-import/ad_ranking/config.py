"""Settings for conversion attribution and ad ranking."""

# A conversion counts for an ad when it happens at most this long after a click on that ad
# (7-day click-through window, the advertiser-facing default).
ATTRIBUTION_WINDOW_SECONDS = 7 * 24 * 3600

# Beta priors: a new ad with a handful of events gets a rate near the platform average
# instead of 0 or 1.
PRIOR_CLICKS = 1
PRIOR_IMPRESSIONS = 100
PRIOR_CONVERSIONS = 1
PRIOR_CONVERSION_CLICKS = 50

# Response and request limits of POST /v1/rank.
MAX_ADS_PER_RESPONSE = 10
MAX_CANDIDATES = 500
