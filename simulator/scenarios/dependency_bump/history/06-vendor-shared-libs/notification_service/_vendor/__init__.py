"""Third-party libraries vendored into notification_service; the pins are in ../vendor.txt."""
