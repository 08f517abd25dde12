"""Third-party libraries vendored into inventory_service; the pins are in ../vendor.txt."""
