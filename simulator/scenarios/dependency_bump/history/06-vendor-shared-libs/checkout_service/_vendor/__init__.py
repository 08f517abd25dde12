"""Third-party libraries vendored into checkout_service; the pins are in ../vendor.txt."""
