"""Third-party libraries vendored into api_gateway; the pins are in ../vendor.txt."""
