"""Prices in the shop."""


def apply_discount(price: float, percent: float) -> float:
    """The price after a discount of ``percent`` per cent, rounded to cents."""
    if not 0 <= percent <= 100:
        raise ValueError(f"a discount is between 0 and 100 per cent, not {percent}")
    return round(price - price * percent, 2)


def total(prices: list[float], percent: float = 0) -> float:
    """The sum of ``prices``, each with the same discount."""
    return round(sum(apply_discount(p, percent) for p in prices), 2)
