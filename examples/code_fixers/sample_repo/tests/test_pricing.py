import pytest
from shop.pricing import apply_discount, total


def test_no_discount_keeps_the_price() -> None:
    assert apply_discount(80.0, 0) == 80.0


def test_a_quarter_off() -> None:
    assert apply_discount(80.0, 25) == 60.0


def test_total_with_a_discount() -> None:
    assert total([10.0, 20.0], 10) == 27.0


def test_a_discount_over_100_is_refused() -> None:
    with pytest.raises(ValueError):
        apply_discount(10.0, 120)
