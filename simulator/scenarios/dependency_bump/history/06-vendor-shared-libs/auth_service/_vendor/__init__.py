"""Third-party libraries vendored into auth_service; the pins are in ../vendor.txt."""
