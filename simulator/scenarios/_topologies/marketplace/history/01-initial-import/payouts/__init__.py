"""payouts: weekly seller payout statements from delivered orders on orders-db."""
