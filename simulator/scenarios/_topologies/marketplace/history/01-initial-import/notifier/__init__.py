"""notifier: consumes the order-events queue and sends the buyer and seller e-mails."""
