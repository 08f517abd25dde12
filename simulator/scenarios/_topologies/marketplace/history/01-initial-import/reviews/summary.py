"""reviews rating summary: the stars histogram and the average shown on a listing page."""


def rating_summary(ratings):
    """Count per star (1-5), the average to one decimal, and the number of reviews."""
    stars = {str(s): 0 for s in range(1, 6)}
    for rating in ratings:
        if rating not in range(1, 6):
            raise ValueError(f"rating {rating!r} is not 1-5 stars")
        stars[str(rating)] += 1
    count = len(ratings)
    average = round(sum(ratings) / count, 1) if count else None
    return {"stars": stars, "average": average, "count": count}
