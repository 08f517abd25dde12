"""Third-party libraries vendored into payment_service; the pins are in ../vendor.txt."""
