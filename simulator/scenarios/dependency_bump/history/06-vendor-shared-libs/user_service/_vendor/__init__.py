"""Third-party libraries vendored into user_service; the pins are in ../vendor.txt."""
