"""Third-party libraries vendored into order_service; the pins are in ../vendor.txt."""
