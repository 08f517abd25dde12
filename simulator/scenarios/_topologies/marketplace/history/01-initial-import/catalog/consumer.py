"""catalog consumer: image-processed events in, the listing's image list updated."""


def attach_image(images, event):
    """Images of a listing after the image pipeline processed one: by position, no duplicates."""
    kept = [img for img in images if img["position"] != event["position"]]
    kept.append({"position": event["position"], "url": event["url"]})
    return sorted(kept, key=lambda img: img["position"])
